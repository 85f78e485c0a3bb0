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

import dataclasses
import hashlib
import re
import importlib.util
from pathlib import Path
from types import MappingProxyType
from typing import Any, Sequence

from designer.catalog.merge import Merge
from designer.catalog.schema import PLURALS
from designer.catalog.types import Catalog
from designer.errors import CatalogError, InputError, Location
from designer.spec import yamlio

# Load order of the built-in files: referenced kinds (GPUs, NICs) come before their users.
BUILTIN_FILES = ("gpus.yaml", "nics.yaml", "switches.yaml", "cables.yaml", "transceivers.yaml",
                 "servers.yaml", "clouds.yaml", "fabrics.yaml", "facility.yaml", "support.yaml", "licences.yaml",
                 "storage.yaml", "appliances.yaml")
_BUILTIN_PACKAGE = "designer.catalogs"


# A file is taken for a catalog, and quoted in messages, only when lines of its own start with
# the catalog's first keys: the content of anything else (``catalogs: [/etc/shadow]``) is never
# echoed, not even a key of it that YAML happened to parse.
_CATALOG_KEYS = (re.compile(r"^schema_version[ \t]*:", re.M), re.compile(r"^kind[ \t]*:", re.M))


def _refuse(path: Path, named_at: tuple[str, Location] | None) -> CatalogError:
    """The one error for a file that cannot be used as a catalog (:data:`yamlio.NOT_A_CATALOG`),
    at the place that names it (a spec's ``catalogs[i]``, quoted as written) or else at the file."""
    if named_at is None:
        return CatalogError(yamlio.NOT_A_CATALOG, Location(str(path)))
    written, where = named_at
    return CatalogError(f"catalog file {yamlio.shown(written)} {yamlio.NOT_A_CATALOG} (paths resolve relative "
                        "to the spec's folder)", where)


def _read_user_file(path: Path, named_at: tuple[str, Location] | None) -> str:
    """A user catalog's text: a regular file of at most ``yamlio.MAX_BYTES`` bytes of UTF-8 text,
    read once without blocking, that looks like a catalog; else the one refusal of :func:`_refuse`."""
    try:
        text = yamlio.read_regular_file(path).decode("utf-8")
    except (OSError, ValueError):  # UnicodeDecodeError is a ValueError
        raise _refuse(path, named_at) from None
    if "\x00" in text or not all(key.search(text) for key in _CATALOG_KEYS):
        raise _refuse(path, named_at)
    return text


def _load_doc(path: Path, raw: bytes | None = None, named_at: tuple[str, Location] | None = None
              ) -> tuple[yamlio.YamlDoc, bytes]:
    """Parse a user file (or the bytes of a built-in one) and return it with the bytes it was
    parsed from (read once: a second read could see another file); YAML problems become
    CatalogErrors, located in the file."""
    text = raw.decode("utf-8") if raw is not None else _read_user_file(path, named_at)
    try:
        return yamlio.load_yaml_text(text, str(path)), text.encode("utf-8")
    except InputError as exc:
        raise CatalogError(exc.message, exc.location) from None


def _builtin_root() -> Any:
    """The installed ``designer.catalogs`` package, or ``catalogs/`` beside the package in a checkout.

    The package's folder is found from its import spec, without importing it: ``importlib.resources``
    would import ``tempfile``, ``shutil`` and ``zipfile`` on the way (5 ms of every start-up that
    reads a catalog); it is used only where the package is not a folder (a zipped install).
    """
    spec = importlib.util.find_spec(_BUILTIN_PACKAGE)
    if spec is None:
        # pyproject maps catalogs/ to designer.catalogs only when installed; a source checkout
        # (tests run from the repository) finds it next to the designer/ folder instead.
        return Path(__file__).resolve().parents[2] / "catalogs"
    folders = list(spec.submodule_search_locations or ())
    if folders and (Path(folders[0]) / BUILTIN_FILES[0]).is_file():
        return Path(folders[0])
    from importlib import resources

    return resources.files(_BUILTIN_PACKAGE)


def builtin_paths() -> tuple[Path, ...]:
    """The built-in catalog files that exist as files on disk (an output must never replace one)."""
    root = _builtin_root()
    paths = (Path(str(root.joinpath(name))) for name in BUILTIN_FILES)
    return tuple(p for p in paths if p.is_file())


def _apply_builtins(merge: Merge, digest: Any, files: dict[str, str]) -> None:
    root = _builtin_root()
    for file_name in BUILTIN_FILES:
        resource = root.joinpath(file_name)
        doc, raw = _load_doc(Path(str(resource)), resource.read_bytes())
        digest.update(raw)
        files[f"builtin:{file_name}"] = hashlib.sha256(raw).hexdigest()
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


def load_catalog(user_files: Sequence[Path | str] = (), *, base: Catalog | None = None,
                 named_at: Sequence[tuple[str, Location]] | None = None) -> Catalog:
    """Load the built-in catalogs (or ``base``) and merge user catalog files over them, in order.

    Model:
        Later files override earlier ones, user files override built-ins. An item naming an
        existing entry of its kind replaces only the fields it gives (its ``source``/``as_of``
        describe those fields); a new name adds an entry and must give every required field.

    Args:
        user_files: user catalog YAML files, applied in the order given.
        base: an already loaded catalog to merge onto instead of the built-ins.
        named_at: per user file, its name as written and where (a spec's ``catalogs[i]``): a
            file that cannot be used as a catalog is reported there, without a word of its content.

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
    files: dict[str, str] = {}  # file -> sha256 of its bytes, in load order
    if base is None:
        _apply_builtins(merge, digest, files)
    else:
        digest.update(base.digest.encode("ascii"))
        files.update(base.files)
    for i, user_file in enumerate(user_files):
        path = Path(user_file)
        doc, raw = _load_doc(path, named_at=named_at[i] if named_at is not None else None)
        digest.update(raw)
        files[str(user_file)] = hashlib.sha256(raw).hexdigest()
        merge.apply(doc, str(user_file))
    merge.check_references()
    return dataclasses.replace(merge.catalog(digest.hexdigest()), files=MappingProxyType(files))
