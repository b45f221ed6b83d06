"""A real non-Wikipedia folder built from this machine's files, and its hand-written questions.

The folder is what an administrator of a Debian system could keep to look up
how accounts and logins work: the manual pages of the account tools
(adduser, useradd, passwd, chage, ...), of the files they read (login.defs,
adduser.conf, shadow, ...) and of the PAM modules (pam_unix, pam_faillock,
...), rendered to text, beside the package documentation under
``/usr/share/doc`` (READMEs, Debian copyright files, the base-passwd notes on
users and groups, systemd's notes on UID ranges). Nothing is copied into the
repository: :func:`build_folder` reads the machine's files each time.

``questions.jsonl`` (next to this file) holds multi-hop questions written by
reading those documents: each needs two or more documents, the later one
found only through a fact the earlier one states. A question's ``hops`` list
one entry per document it needs; a hop is a list of alternatives (a fact a
shadow-utils manual repeats, such as a ``login.defs`` setting, is stated by
several pages, any of which answers the hop), each ``{"doc": path in the
folder, "line": the line of that document that proves it}``.

:func:`usable_questions` keeps the questions whose every hop has an
alternative present on this machine with its proving line (compared with runs
of whitespace collapsed: manual pages are justified), so a machine with other
versions of these packages skips the questions its documents no longer prove
instead of scoring against stale gold.

Manual pages are rendered with ``groff -mandoc -Tutf8`` with hyphenation off
(``-rHY=0``) at 78 columns, so a word is never split across two lines.
"""

from __future__ import annotations

import gzip
import json
import re
import shutil
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "MAN_PAGES",
    "DOC_FILES",
    "QUESTIONS",
    "Question",
    "build_folder",
    "load_questions",
    "usable_questions",
    "normalize",
]

QUESTIONS = Path(__file__).with_name("questions.jsonl")

#: (name, section) of every manual page in the folder, written to ``man/NAME.SECTION.txt``
_MAN_NAMES = """
    adduser.8 adduser.conf.5 deluser.8 deluser.conf.5 useradd.8 usermod.8 userdel.8
    groupadd.8 groupdel.8 groupmod.8 gpasswd.1 passwd.1 passwd.5 shadow.5 group.5
    gshadow.5 login.defs.5 login.1 nologin.8 chsh.1 chfn.1 newgrp.1 su.1 pam.conf.5
    limits.conf.5 access.conf.5 faillock.conf.5 pam_env.conf.5 nsswitch.conf.5
    chpasswd.8 chage.1 pwck.8 grpck.8 vipw.8 lastlog.8 faillog.5 faillog.8 update-passwd.8
    pam_unix.8 pam_limits.8 pam_faillock.8 pam_access.8 pam_mkhomedir.8 pam_nologin.8
    pam_motd.8 motd.5 issue.5 securetty.5 pam_securetty.8 pwconv.8 newusers.8 getent.1
    id.1 groups.1 shells.5 chgpasswd.8 subuid.5 subgid.5 pam_umask.8 pam_lastlog.8
    pam_shells.8 pam_wheel.8 pam_deny.8 pam_permit.8 crypt.5
"""
MAN_PAGES: tuple[tuple[str, str], ...] = tuple(
    (m.rsplit(".", 1)[0], m.rsplit(".", 1)[1]) for m in _MAN_NAMES.split()
)

#: (file under /usr/share/doc, path in the folder); a ``.gz`` source is decompressed
DOC_FILES: tuple[tuple[str, str], ...] = (
    ("adduser/README.gz", "doc/adduser/README"),
    ("adduser/copyright", "doc/adduser/copyright"),
    ("passwd/README.Debian", "doc/passwd/README.Debian"),
    ("passwd/copyright", "doc/passwd/copyright"),
    ("libpam0g/README", "doc/libpam0g/README"),
    ("libpam0g/README.Debian", "doc/libpam0g/README.Debian"),
    ("libpam0g/copyright", "doc/libpam0g/copyright"),
    ("base-passwd/README", "doc/base-passwd/README"),
    ("base-passwd/users-and-groups.txt.gz", "doc/base-passwd/users-and-groups.txt"),
    ("base-passwd/copyright", "doc/base-passwd/copyright"),
    ("util-linux/PAM-configuration.txt", "doc/util-linux/PAM-configuration.txt"),
    ("systemd/UIDS-GIDS.md.gz", "doc/systemd/UIDS-GIDS.md"),
)

DOC_ROOT = Path("/usr/share/doc")


@dataclass(frozen=True)
class Question:
    """A hand-written multi-hop question: one list of alternatives ``(doc, line)`` per hop."""

    qid: str
    question: str
    hops: tuple[tuple[tuple[str, str], ...], ...]

    @property
    def gold(self) -> list[str]:
        """The first alternative of each hop (the document the question was written from)."""
        return [hop[0][0] for hop in self.hops]


def normalize(line: str) -> str:
    """``line`` with runs of whitespace collapsed to one space and the ends stripped."""
    return re.sub(r"\s+", " ", line).strip()


def _render_man(name: str, section: str) -> str | None:
    """A manual page as plain text (no hyphenation, 78 columns), or None when absent."""
    found = subprocess.run(
        ["man", "-w", section, name], capture_output=True, text=True, check=False
    )
    source = Path(found.stdout.strip()) if found.returncode == 0 else None
    if source is None or not source.is_file():
        return None
    raw = source.read_bytes()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    out = subprocess.run(
        ["groff", "-t", "-mandoc", "-Tutf8", "-rHY=0", "-rLL=78n"],
        input=raw,
        capture_output=True,
        check=False,
    )
    if out.returncode != 0:
        return None
    plain = subprocess.run(["col", "-bx"], input=out.stdout, capture_output=True, check=False)
    return plain.stdout.decode("utf-8", errors="replace") if plain.returncode == 0 else None


def tools_missing() -> list[str]:
    """The programs the build needs (``man``, ``groff``, ``col``) that this machine lacks."""
    return [t for t in ("man", "groff", "col") if shutil.which(t) is None]


def build_folder(dest: Path) -> tuple[list[str], list[str]]:
    """Write the folder under ``dest`` (replacing it); returns (written paths, missing sources).

    Manual pages are skipped (listed as missing) when ``man``/``groff``/``col``
    are absent; documentation files when absent from ``/usr/share/doc``.
    """
    if dest.exists():
        shutil.rmtree(dest)
    written: list[str] = []
    missing: list[str] = []
    can_render = not tools_missing()
    for name, section in MAN_PAGES:
        rel = f"man/{name}.{section}.txt"
        text = _render_man(name, section) if can_render else None
        if not text or not text.strip():
            missing.append(rel)
            continue
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        (dest / rel).write_text(text, encoding="utf-8")
        written.append(rel)
    for src, rel in DOC_FILES:
        path = DOC_ROOT / src
        if not path.is_file():
            missing.append(rel)
            continue
        raw = path.read_bytes()
        if src.endswith(".gz"):
            raw = gzip.decompress(raw)
        (dest / rel).parent.mkdir(parents=True, exist_ok=True)
        (dest / rel).write_bytes(raw)
        written.append(rel)
    return written, missing


def load_questions(path: Path = QUESTIONS) -> list[Question]:
    """The questions of ``path`` (JSONL: ``id``, ``question``, ``hops``)."""
    out = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        rec = json.loads(line)
        try:
            hops = tuple(tuple((a["doc"], a["line"]) for a in hop) for hop in rec["hops"])
            out.append(Question(rec["id"], rec["question"], hops))
        except (KeyError, TypeError) as exc:
            raise ValueError(f"{path}:{n}: a question needs id, question, hops: {exc}") from exc
    return out


def _proves(folder: Path, doc: str, line: str) -> bool:
    path = folder / doc
    if not path.is_file():
        return False
    want = normalize(line)
    text = path.read_text(encoding="utf-8", errors="replace")
    return any(normalize(ln) == want for ln in text.splitlines())


def usable_questions(
    questions: Sequence[Question], folder: Path
) -> tuple[list[Question], list[str]]:
    """(questions whose every hop is proved here, ids of the others).

    A hop keeps only the alternatives present in ``folder`` with their proving line.
    """
    kept: list[Question] = []
    dropped: list[str] = []
    for q in questions:
        hops = tuple(tuple(a for a in hop if _proves(folder, *a)) for hop in q.hops)
        if all(hops):
            kept.append(Question(q.qid, q.question, hops))
        else:
            dropped.append(q.qid)
    return kept, dropped
