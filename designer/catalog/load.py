"""Catalogs: the built-in ``catalogs/*.yaml`` plus user files, validated once into a frozen Catalog.

Every catalog file has the same form::

    schema_version: 1
    kind: switch            # one of designer.catalog.types.KINDS
    items:
      - name: nvidia-qm9700
        price: $36,000      # quantities carry units, parsed by designer.spec.units
        source: ...         # every item says where its figures come from
        as_of: 2024-08      # YYYY, YYYY-MM or YYYY-MM-DD

Files load in order (built-ins first, then user files in the order given) and merge by the rules
of :mod:`designer.catalog.merge` (docs/catalogs.md).
"""

from __future__ import annotations

__all__ = ["BUILTIN_FILES", "builtin_paths", "load_builtin", "load_catalog"]

import hashlib
from importlib import resources
from pathlib import Path
from typing import Any, Sequence

from designer.catalog.merge import Merge
from designer.catalog.schema import PLURALS
from designer.catalog.types import Catalog
from designer.errors import CatalogError, InputError, Location
from designer.spec import yamlio

# Load order of the built-in files: referenced kinds (GPUs, NICs) come before their users.
BUILTIN_FILES = ("gpus.yaml", "nics.yaml", "switches.yaml", "cables.yaml", "transceivers.yaml",
                 "servers.yaml", "clouds.yaml", "fabrics.yaml", "facility.yaml")
_BUILTIN_PACKAGE = "designer.catalogs"


def _load_doc(path: Path, raw: bytes | None = None) -> tuple[yamlio.YamlDoc, bytes]:
    """Parse a user file (or the bytes of a built-in one); YAML problems become CatalogErrors."""
    try:
        if raw is not None:
            return yamlio.load_yaml_text(raw.decode("utf-8"), str(path)), raw
        return yamlio.load_yaml(path), path.read_bytes()
    except InputError as exc:
        raise CatalogError(exc.message, exc.location) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise CatalogError(f"cannot read file: {exc}", Location(str(path))) from None


def _builtin_root() -> Any:
    """The installed ``designer.catalogs`` package, or ``catalogs/`` beside the package in a checkout."""
    try:
        return resources.files(_BUILTIN_PACKAGE)
    except ModuleNotFoundError:
        # pyproject maps catalogs/ to designer.catalogs only when installed; a source checkout
        # (tests run from the repository) finds it next to the designer/ folder instead.
        return Path(__file__).resolve().parents[2] / "catalogs"


def builtin_paths() -> tuple[Path, ...]:
    """The built-in catalog files that exist as files on disk (an output must never replace one)."""
    root = _builtin_root()
    paths = (Path(str(root.joinpath(name))) for name in BUILTIN_FILES)
    return tuple(p for p in paths if p.is_file())


def _apply_builtins(merge: Merge, digest: Any) -> None:
    root = _builtin_root()
    for file_name in BUILTIN_FILES:
        resource = root.joinpath(file_name)
        doc, raw = _load_doc(Path(str(resource)), resource.read_bytes())
        digest.update(raw)
        stem = file_name.removesuffix(".yaml")
        merge.apply(doc, f"builtin:{file_name}", expected_kind=PLURALS.get(stem, stem))


def load_builtin() -> Catalog:
    """Load and validate the catalogs shipped with the package (``designer.catalogs``).

    Returns:
        The built-in Catalog; ``digest`` is the sha256 of the built-in files' bytes in load order.

    Raises:
        CatalogError: a built-in file is invalid (a packaging bug, located at FILE:LINE:COL).
    """
    return load_catalog(())


def load_catalog(user_files: Sequence[Path | str] = (), *, base: Catalog | None = None) -> Catalog:
    """Load the built-in catalogs (or ``base``) and merge user catalog files over them, in order.

    Model:
        Later files override earlier ones, user files override built-ins. An item naming an
        existing entry of its kind replaces only the fields it gives (its ``source``/``as_of``
        describe those fields); a new name adds an entry and must give every required field.

    Args:
        user_files: user catalog YAML files, applied in the order given.
        base: an already loaded catalog to merge onto instead of the built-ins.

    Returns:
        The merged Catalog. ``digest`` is sha256 over the bytes of every file in load order
        (built-ins first); with ``base`` it is sha256(base.digest + the user files' bytes).

    Raises:
        CatalogError: malformed YAML, unknown key, bad unit, missing field, unknown reference;
            located at FILE:LINE:COL with a did-you-mean where one is close.
    """
    if isinstance(user_files, (str, Path)):  # one file given bare, not in a list
        user_files = (user_files,)
    merge = Merge(base)
    digest = hashlib.sha256()
    if base is None:
        _apply_builtins(merge, digest)
    else:
        digest.update(base.digest.encode("ascii"))
    for user_file in user_files:
        path = Path(user_file)
        doc, raw = _load_doc(path)
        digest.update(raw)
        merge.apply(doc, str(user_file))
    merge.check_references()
    return merge.catalog(digest.hexdigest())
