"""The package's version: its one definition (``pyproject.toml`` reads it from here).

Any module may import it: it imports nothing, so no layer reaches up through the
package facade (``thresher/__init__.py``) to learn it.
"""

__version__ = "0.1.0"
