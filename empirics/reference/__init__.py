"""Reference data shipped inside the package (a wheel install has no tests/ directory).

- chinchilla_svg_extracted.csv: Epoch AI's points read off Hoffmann et al. (2022) Fig. 4, the data of
  their Chinchilla replication (Besiroglu et al. 2024); `tmcheck demo` re-fits it.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

CHINCHILLA_CSV = "chinchilla_svg_extracted.csv"


def reference_path(name: str) -> Path:
    """The file `name` of the reference data as a path on disk (FileNotFoundError if absent)."""
    path = Path(str(resources.files(__name__) / name))
    if not path.is_file():
        raise FileNotFoundError(2, "reference data missing from the installation", str(path))
    return path
