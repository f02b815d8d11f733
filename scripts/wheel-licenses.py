#!/usr/bin/env python3
"""Adds the copyright notices of the libraries `auditwheel repair` bundled into a wheel.

usage: scripts/wheel-licenses.py WHEEL          (rewrites WHEEL in place; run after auditwheel)

auditwheel copies shared libraries from this machine into kernlens.libs/ (renamed
libNAME-<hash>.so.N) and lists most of the Debian packages they came from in the wheel's SBOM
(<dist-info>/sboms/auditwheel.cdx.json, purl pkg:deb/debian/NAME); every bundled file is also
looked up with `dpkg -S` under its original name (the SBOM misses some). Their licences ask that
the notices travel with the binaries: each package's /usr/share/doc/NAME/copyright goes into
<dist-info>/licenses/bundled/NAME.copyright, and RECORD gets their hashes. Fails when a bundled
library has no Debian package or a package no copyright file.
"""
import base64
import hashlib
import json
import os
import re
import subprocess
import sys
import zipfile


def owning_package(libname: str) -> str:
    """The Debian package that holds the library a bundled file (libNAME-<hash>.so.N) copies."""
    original = re.sub(r"-[0-9a-f]{8}(\.so)", r"\1", libname)
    out = subprocess.run(["dpkg", "-S", f"*/{original}"], capture_output=True, text=True).stdout
    names = {line.split(":")[0] for line in out.splitlines() if ":" in line}
    if not names:
        raise SystemExit(f"wheel-licenses: no Debian package holds {original} (bundled as {libname})")
    return sorted(names)[0]


def record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def main() -> int:
    wheel = sys.argv[1]
    with zipfile.ZipFile(wheel) as z:
        infos = z.infolist()
        contents = {i.filename: z.read(i) for i in infos}
    dist_info = next(n.split("/")[0] for n in contents if n.split("/")[0].endswith(".dist-info"))
    sbom = json.loads(contents[f"{dist_info}/sboms/auditwheel.cdx.json"])
    packages = {c["name"] for c in sbom.get("components", []) if c.get("purl", "").startswith("pkg:deb/")}
    for n in contents:
        if re.match(r"[^/]+\.libs/[^/]+\.so", n):
            packages.add(owning_package(n.split("/")[-1]))
    packages = sorted(packages)
    added = {}
    for pkg in packages:
        path = f"/usr/share/doc/{pkg}/copyright"
        if not os.path.isfile(path):
            sys.stderr.write(f"wheel-licenses: no {path} for the bundled package {pkg}\n")
            return 1
        with open(path, "rb") as f:
            added[f"{dist_info}/licenses/bundled/{pkg}.copyright"] = f.read()
    record_name = f"{dist_info}/RECORD"
    record = [l for l in contents[record_name].decode().splitlines() if l and not l.startswith(tuple(added))]
    record[-1:-1] = [record_line(n, d) for n, d in added.items()]  # RECORD's own line stays last
    tmp = wheel + ".tmp"
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as out:
        for i in infos:
            if i.filename == record_name or i.filename in added:
                continue
            out.writestr(i, contents[i.filename])
        for n, d in added.items():
            out.writestr(n, d)
        out.writestr(record_name, "\n".join(record) + "\n")
    os.replace(tmp, wheel)
    print(f"wheel-licenses: {len(added)} notices of bundled packages: {', '.join(packages)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
