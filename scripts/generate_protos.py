"""Regenerate the Python modules beside the .proto files, or check that they are fresh.

    python scripts/generate_protos.py          # rewrite proto/tablelog/v1/*_pb2*.py(i)
    python scripts/generate_protos.py --check  # exit 1 if regenerating would change anything

Uses grpcio-tools' bundled protoc and mypy-protobuf's plugins, so it works offline from PyPI.
"""

from __future__ import annotations

import argparse
import filecmp
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PROTO_ROOT = ROOT / "proto"
PACKAGE = PROTO_ROOT / "tablelog" / "v1"
GENERATED_SUFFIXES = ("_pb2.py", "_pb2.pyi", "_pb2_grpc.py", "_pb2_grpc.pyi")


def _plugin(name: str) -> str:
    scripts = Path(sysconfig.get_path("scripts"))
    found = shutil.which(name, path=str(scripts)) or shutil.which(name)
    if not found:
        raise SystemExit(f"{name} not found: pip install -e '.[dev]'")
    return found


def generate(out_dir: Path) -> None:
    import grpc_tools  # type: ignore[import-untyped]  # ships no type information

    well_known = Path(grpc_tools.__file__).parent / "_proto"
    protos = sorted(str(p.relative_to(PROTO_ROOT)) for p in PACKAGE.glob("*.proto"))
    protoc = [sys.executable, "-m", "grpc_tools.protoc", f"-I{PROTO_ROOT}", f"-I{well_known}"]
    messages = [
        f"--plugin=protoc-gen-mypy={_plugin('protoc-gen-mypy')}",
        f"--python_out={out_dir}",
        f"--mypy_out=quiet:{out_dir}",
    ]
    # Only files that declare a service get gRPC stubs.
    services = [p for p in protos if "\nservice " in (PROTO_ROOT / p).read_text()]
    stubs = [
        f"--plugin=protoc-gen-mypy_grpc={_plugin('protoc-gen-mypy_grpc')}",
        f"--grpc_python_out={out_dir}",
        f"--mypy_grpc_out=quiet:{out_dir}",
    ]
    subprocess.run([*protoc, *messages, *protos], check=True, cwd=PROTO_ROOT)
    subprocess.run([*protoc, *stubs, *services], check=True, cwd=PROTO_ROOT)


def _generated(directory: Path) -> dict[str, Path]:
    return {p.name: p for p in directory.iterdir() if p.name.endswith(GENERATED_SUFFIXES)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--check", action="store_true", help="only check freshness")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        generate(out)
        fresh = _generated(out / "tablelog" / "v1")
        current = _generated(PACKAGE)
        stale = sorted(
            name
            for name in fresh.keys() | current.keys()
            if name not in fresh
            or name not in current
            or not filecmp.cmp(fresh[name], current[name], shallow=False)
        )
        if args.check:
            if stale:
                print("generated code is stale:", ", ".join(stale))
                print("run: python scripts/generate_protos.py")
                return 1
            print(f"generated code is fresh ({len(fresh)} files)")
            return 0
        for name in current.keys() - fresh.keys():
            current[name].unlink()
        for name, path in fresh.items():
            shutil.copyfile(path, PACKAGE / name)
        print(f"wrote {len(fresh)} files; changed: {', '.join(stale) or 'none'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
