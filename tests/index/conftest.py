"""Shared fixtures for the index tests: a small made-up corpus, the real MiniLM
embedder (loaded once per session) and one index built from the corpus once."""

from __future__ import annotations

from pathlib import Path

import pytest

from thresher.config import Config
from thresher.corpus.document import Document

from .helpers import CountingEmbedder

# (doc_id, title, text). Short, made up, on distinct topics so that the right
# document is obvious; a few carry strings for grep (dates, codes, unicode).
_DOCS: list[tuple[str, str, str]] = [
    (
        "astro-1",
        "Kepler Station",
        "Kepler Station orbits the moon Io. Its crew of nine studies "
        "volcanic plumes. The station was launched on 2031-04-12 by the Orion agency.",
    ),
    (
        "astro-2",
        "Orion Agency",
        "The Orion agency builds orbital habitats. Its director, Mara "
        "Velasquez, approved the Kepler Station mission in 2029.",
    ),
    (
        "astro-3",
        "Io Plumes",
        "Sulfur plumes on Io rise four hundred kilometres above the surface. "
        "Spectrometers aboard orbiting stations measure their sulfur dioxide content.",
    ),
    (
        "bake-1",
        "Sourdough Basics",
        "A sourdough starter is flour and water fermented by wild "
        "yeast. Feed it daily and keep it at room temperature before baking bread.",
    ),
    (
        "bake-2",
        "Rye Bread",
        "Rye bread uses a dense dough with caraway seeds. Bake it at 230 C "
        "for forty minutes, then let the loaf rest overnight.",
    ),
    (
        "bake-3",
        "Croissant Lamination",
        "Croissants need butter folded into the dough in thin "
        "layers. Three letter folds give eighty-one layers of pastry.",
    ),
    (
        "chess-1",
        "Sicilian Defence",
        "The Sicilian Defence begins 1.e4 c5. Black fights for the "
        "centre asymmetrically and often gets counterplay on the queenside.",
    ),
    (
        "chess-2",
        "Endgame Opposition",
        "In king and pawn endgames the opposition decides who must "
        "give way. Kings facing each other with one square between them.",
    ),
    (
        "chess-3",
        "Grandmaster Lina Ott",
        "Lina Ott became a grandmaster at fourteen. She is known "
        "for her deep preparation of the Sicilian Defence.",
    ),
    (
        "geo-1",
        "River Vell",
        "The River Vell rises in the Harrow hills and flows 212 km to the "
        "sea at Port Amsel. Salmon return to it every autumn.",
    ),
    (
        "geo-2",
        "Port Amsel",
        "Port Amsel is a harbour town at the mouth of the River Vell. Its "
        "lighthouse, built in 1887, still guides fishing boats.",
    ),
    (
        "geo-3",
        "Harrow Hills",
        "The Harrow hills are chalk downs covered in sheep pasture. "
        "Several rivers, including the Vell, have their source there.",
    ),
    (
        "med-1",
        "Vitamin D",
        "Vitamin D is made in the skin under sunlight. Deficiency weakens "
        "bones and is common in northern winters.",
    ),
    (
        "med-2",
        "Influenza Vaccine",
        "The influenza vaccine is updated every year because the virus "
        "mutates. Health workers are vaccinated first each autumn.",
    ),
    (
        "med-3",
        "Bone Density",
        "Bone density scans measure calcium in the hip and spine. Low "
        "density raises the risk of fractures in older adults.",
    ),
    (
        "music-1",
        "Baroque Cello",
        "The baroque cello uses gut strings and no endpin. Players hold "
        "it between the calves and use a convex bow.",
    ),
    (
        "music-2",
        "Composer Ilse Brandt",
        "Ilse Brandt wrote six suites for baroque cello. She "
        "taught at the conservatory of Port Amsel for thirty years.",
    ),
    (
        "music-3",
        "Tuning Systems",
        "Equal temperament divides the octave into twelve equal "
        "semitones. Meantone tuning favours pure major thirds.",
    ),
    (
        "code-1",
        "Error E1042",
        "Error code E1042 means the configuration file is missing. Create "
        "config.toml in the project folder and run the tool again.",
    ),
    (
        "code-2",
        "Error E2001",
        "Error code E2001 means the network timed out. Check the proxy "
        "settings; contact support@example.org if it persists.",
    ),
    (
        "code-3",
        "Release Notes 4.2",
        "Version 4.2 adds a --dry-run flag, fixes error E1042 on "
        "Windows paths like C:\\Users\\ana, and drops Python 3.8.",
    ),
    (
        "garden-1",
        "Tomato Blight",
        "Tomato blight is a fungus that spreads in wet weather. Remove "
        "infected leaves and water the soil, not the foliage.",
    ),
    (
        "garden-2",
        "Companion Planting",
        "Basil planted beside tomatoes is said to repel "
        "whitefly. Marigolds deter nematodes in vegetable beds.",
    ),
    (
        "garden-3",
        "Compost Heaps",
        "A compost heap needs green and brown material in balance. "
        "Turn it monthly so that air reaches the centre.",
    ),
    (
        "hist-1",
        "Treaty of Vell",
        "The Treaty of Vell, signed in 1652, ended the salt war "
        "between the river towns. Port Amsel gained fishing rights.",
    ),
    (
        "hist-2",
        "Salt War",
        "The salt war lasted eleven years. Barges on the River Vell were "
        "seized and burned by both sides.",
    ),
    (
        "hist-3",
        "Café Müller",
        "Café Müller in Port Amsel served naïve painters and poets. "
        "Its owner, Jörg Müller, kept a guest book from 1901 to 1939.",
    ),
    (
        "sport-1",
        "Marathon Pacing",
        "Marathon runners aim for even splits. Starting too fast "
        "drains glycogen and leads to hitting the wall after 30 km.",
    ),
    (
        "sport-2",
        "Rowing Regatta",
        "The Vell regatta is rowed over 2000 metres each June. Eight "
        "oared boats race upstream against the current.",
    ),
    (
        "sport-3",
        "Climbing Grades",
        "Climbing grades such as 6a or 7c describe difficulty. Bouldering uses a separate V scale.",
    ),
    (
        "zoo-1",
        "Red Panda",
        "The red panda eats bamboo and sleeps in trees. It is more closely "
        "related to raccoons than to giant pandas.",
    ),
    (
        "zoo-2",
        "Axolotl",
        "The axolotl is a salamander that keeps its gills as an adult. It "
        "can regrow lost limbs within weeks.",
    ),
    (
        "zoo-3",
        "Snow Leopard",
        "Snow leopards live above 3000 metres in Central Asia. Their "
        "thick tails help them balance on rocky slopes.",
    ),
    (
        "multi-1",
        "Lighthouse Keepers",
        "Keepers of the Port Amsel lighthouse logged every "
        "storm.\nThe last keeper retired in 1994.\nAutomation replaced him.",
    ),
    (
        "multi-2",
        "aaaa",
        "aaaaaaaaaaaab is a string that trips backtracking engines when it is longer: aaaaaaaaaaaa",
    ),
    (
        "multi-3",
        "Email Archive",
        "Messages from ana@example.org and bo@example.net were "
        "archived on 2024-01-05 and 2024-02-17.",
    ),
]


def make_documents(docs: list[tuple[str, str, str]] | None = None) -> list[Document]:
    """The test corpus as Documents (source names the test, metadata is varied)."""
    out = []
    for i, (doc_id, title, text) in enumerate(_DOCS if docs is None else docs):
        topic = doc_id.split("-")[0]
        metadata = {"topic": topic, "n": i, "even": i % 2 == 0, "tags": [topic, "test"]}
        out.append(Document(doc_id, title, text, source=f"test:{doc_id}", metadata=metadata))
    return out


@pytest.fixture(scope="session")
def documents() -> list[Document]:
    """The shared made-up corpus (36 short documents)."""
    return make_documents()


@pytest.fixture(scope="session")
def minilm():
    """The real MiniLM int8 embedder (skips when its registry packages are missing)."""
    from thresher.errors import ModelMissingError
    from thresher.index.embed.embedder import get_embedder

    try:
        embedder = get_embedder("minilm-int8")
        embedder.embed(["warm up"])
    except ModelMissingError as exc:
        pytest.skip(str(exc))
    return embedder


@pytest.fixture
def counting(minilm) -> CountingEmbedder:
    return CountingEmbedder(minilm)


@pytest.fixture(scope="session")
def small_config() -> Config:
    """Small chunks, so that several documents have more than one chunk."""
    return Config().override({"chunking.max_tokens": 24})


@pytest.fixture(scope="session")
def built_index(tmp_path_factory, documents, minilm, small_config) -> Path:
    """One index of the shared corpus, built once per session (treat as read-only)."""
    from thresher.index.backends import ingest

    index_dir = tmp_path_factory.mktemp("index")
    ingest(documents, index_dir, small_config, embedder=minilm, progress=False)
    return index_dir


@pytest.fixture(scope="session")
def store(built_index, small_config, minilm):
    """An EmbeddedStore open on the shared index."""
    from thresher.index.embedded.store import EmbeddedStore

    s = EmbeddedStore(built_index, small_config, embedder=minilm)
    yield s
    s.close()
