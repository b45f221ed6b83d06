"""Domain vocabulary shared by the world builder and the renderers.

Industries carry the words a company, its patents, products and trade events are
described with; several companies share each industry, so documents about
different companies read alike on the surface (the raw material of distractors).
Nothing here names a real organisation, place or person.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Industry", "INDUSTRIES", "ROLES", "ENGINEER_ROLES", "FIELDS", "LANDMARK_KINDS"]


@dataclass(frozen=True, slots=True)
class Industry:
    """One line of business.

    Attributes:
        key: short identifier.
        label: how prose names it ("battery materials").
        suffixes: last words of company names in this industry.
        event_topic: the word in trade-event names ("Battery").
        processes: what patents in this industry claim ("coating cathode particles ...").
        products: kinds of products ("separator film").
        terms: nouns filler sentences use.
    """

    key: str
    label: str
    suffixes: tuple[str, ...]
    event_topic: str
    processes: tuple[str, ...]
    products: tuple[str, ...]
    terms: tuple[str, ...]


INDUSTRIES: tuple[Industry, ...] = (
    Industry(
        "battery", "battery materials", ("Materials", "Energy", "Cells"), "Battery",
        ("coating cathode particles with a thin oxide layer",
         "drying electrode sheets with pulsed infrared light",
         "recovering lithium salts from spent electrolyte",
         "laminating ceramic separator films"),
        ("separator film", "cathode powder", "cell module"),
        ("cathode", "electrolyte", "cell", "separator", "charge cycle"),
    ),
    Industry(
        "marine", "marine sensing", ("Marine", "Oceanics", "Sounding"), "Marine",
        ("measuring salinity with a folded optical path",
         "anchoring buoys in shifting sediment",
         "compensating sonar echoes for hull vibration",
         "sealing pressure housings with a split gasket"),
        ("salinity probe", "sonar array", "data buoy"),
        ("buoy", "hull", "sonar", "tide gauge", "survey vessel"),
    ),
    Industry(
        "agri", "agricultural robotics", ("Robotics", "Agritech", "Field Systems"), "Harvest",
        ("picking soft fruit with a vacuum gripper",
         "mapping weeds from low-flying drones",
         "steering tractors along contour rows",
         "sorting seed by optical density"),
        ("fruit picker", "weeding robot", "seed sorter"),
        ("harvest", "orchard", "tractor", "seed bed", "gripper"),
    ),
    Industry(
        "imaging", "medical imaging", ("Imaging", "Diagnostics", "Medical"), "Imaging",
        ("reducing motion blur in low-dose scans",
         "cooling detector panels with a phase-change layer",
         "reconstructing images from sparse projections",
         "calibrating ultrasound probes against a gel phantom"),
        ("scanner", "detector panel", "ultrasound probe"),
        ("scanner", "detector", "clinic", "dose", "radiologist"),
    ),
    Industry(
        "textile", "textile dyes", ("Dyeworks", "Textiles", "Colour"), "Textile",
        ("fixing plant pigments on wool without metal salts",
         "recycling rinse water in batch dyeing",
         "printing reactive dyes with a cold pad process",
         "measuring colour fastness under humid light"),
        ("pigment paste", "dye concentrate", "print head"),
        ("dye", "loom", "fibre", "rinse bath", "colour fastness"),
    ),
    Industry(
        "water", "water filtration", ("Water", "Filtration", "Aqua"), "Water",
        ("backwashing ceramic membranes with pulsed air",
         "removing nitrates with a layered resin bed",
         "detecting membrane leaks by acoustic emission",
         "dosing chlorine from solar-powered pumps"),
        ("membrane cartridge", "resin column", "dosing pump"),
        ("membrane", "reservoir", "filtrate", "pump station", "turbidity"),
    ),
    Industry(
        "optics", "precision optics", ("Optics", "Photonics", "Lensworks"), "Optics",
        ("polishing aspheric lenses with a magnetic slurry",
         "aligning laser diodes by thermal feedback",
         "coating mirrors with a graded dielectric stack",
         "bonding prisms without adhesive"),
        ("aspheric lens", "laser module", "beam splitter"),
        ("lens", "mirror", "laser", "wavefront", "coating chamber"),
    ),
    Industry(
        "food", "food fermentation", ("Foods", "Ferments", "Cultures"), "Fermentation",
        ("fermenting oat protein with a mixed culture",
         "controlling foam in open fermentation vats",
         "drying starter cultures at low temperature",
         "removing bitterness from pea isolate"),
        ("starter culture", "protein isolate", "fermentation vat"),
        ("culture", "vat", "yeast", "protein", "shelf life"),
    ),
    Industry(
        "drones", "drone logistics", ("Aerial", "Air Logistics", "Skyworks"), "Drone",
        ("swapping drone batteries at a rooftop station",
         "routing parcel drones around weather cells",
         "lowering parcels on a tethered winch",
         "detecting propeller damage from motor current"),
        ("parcel drone", "charging station", "winch pod"),
        ("drone", "parcel", "rotor", "landing pad", "flight corridor"),
    ),
    Industry(
        "geothermal", "geothermal drilling", ("Drilling", "Geothermal", "Heat"), "Geothermal",
        ("cooling drill bits with recirculated brine",
         "lining boreholes with expandable steel sleeves",
         "predicting fracture growth from microseismic data",
         "cleaning scale from heat exchangers"),
        ("drill bit", "borehole liner", "heat exchanger"),
        ("borehole", "brine", "drill string", "reservoir rock", "heat exchanger"),
    ),
    Industry(
        "chips", "semiconductor packaging", ("Semiconductor", "Microsystems", "Devices"), "Chip",
        ("bonding copper pillars at low temperature",
         "cooling stacked dies with embedded channels",
         "testing wafers with a flexible probe card",
         "sealing sensor packages against moisture"),
        ("probe card", "chip package", "bonding tool"),
        ("wafer", "die", "substrate", "solder bump", "clean room"),
    ),
    Industry(
        "acoustic", "acoustic materials", ("Acoustics", "Soundworks", "Panels"), "Acoustics",
        ("damping floor vibration with granular fill",
         "moulding absorber panels from recycled felt",
         "tuning resonator arrays for low frequencies",
         "measuring sound transmission through glazing"),
        ("absorber panel", "floor underlay", "resonator tile"),
        ("panel", "reverberation", "decibel", "felt", "studio"),
    ),
)  # fmt: skip

#: Senior roles, as prose ("chief financial officer").
ROLES: tuple[str, ...] = (
    "chief financial officer",
    "chief operating officer",
    "general counsel",
    "head of manufacturing",
    "director of research",
)

#: Roles of the engineers and scientists who invent things.
ENGINEER_ROLES: tuple[str, ...] = (
    "a senior process engineer",
    "a research scientist",
    "a principal engineer",
    "a materials chemist",
    "a test engineer",
    "a design engineer",
    "a product manager",
    "a field applications engineer",
)

#: Fields of study for degrees.
FIELDS: tuple[str, ...] = (
    "chemical engineering",
    "mechanical engineering",
    "physics",
    "applied mathematics",
    "materials science",
    "electrical engineering",
    "biochemistry",
    "economics",
)

#: Last words of town landmarks.
LANDMARK_KINDS: tuple[str, ...] = ("Bridge", "Tower", "Abbey", "Market Hall", "Lighthouse", "Mill")
