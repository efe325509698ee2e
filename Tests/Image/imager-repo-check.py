#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# Checks a Raspberry Pi Imager repository file (scripts/imager-repo) against
# the images it lists (docs/sd-image.md, "Raspberry Pi Imager"):
#   imager-repo-check.py FILE IMAGE...
# For each IMAGE (a raw .img or an .img.xz) the entry whose url names it:
# every field Imager reads is there with its type; extract_size and
# extract_sha256 are the raw image's, measured here with stat and sha256sum
# (the .img beside an .img.xz; the .xz's own index must give the same
# uncompressed size); image_download_size is the size of the file the url
# names; devices is the image's board's tag; the icon is a PNG; release_date
# is a date. Prints one PASS or FAIL line per check; exit 1 on any FAIL.
import json
import os
import re
import subprocess
import sys
from urllib.parse import urlparse, unquote

TAGS = {"pi-zero-2w": ["pi3-64bit"], "pi4": ["pi4-64bit"], "pi5": ["pi5-64bit"]}
FIELDS = {"name": str, "description": str, "icon": str, "url": str, "extract_size": int,
          "extract_sha256": str, "image_download_size": int, "release_date": str, "devices": list}
fails = 0


def check(name, ok, detail=""):
    global fails
    print(("PASS " if ok else "FAIL ") + name + ("" if ok else f": {detail}"))
    fails += 0 if ok else 1


def local(url):
    u = urlparse(url)
    return unquote(u.path) if u.scheme == "file" else None


def main(argv):
    repo, images = argv[1], argv[2:]
    with open(repo) as f:
        doc = json.load(f)
    entries = doc.get("os_list")
    check("repository: an os_list of entries", isinstance(entries, list) and len(entries) == len(images), f"{type(entries)} {entries and len(entries)}")
    for image in images:
        name = os.path.basename(image)
        found = [e for e in entries or [] if os.path.basename(urlparse(e.get("url", "")).path) == name]
        check(f"{name}: one entry names it", len(found) == 1, f"{len(found)} entries")
        if len(found) != 1:
            continue
        e = found[0]
        missing = [k for k, t in FIELDS.items() if not isinstance(e.get(k), t) or isinstance(e.get(k), bool)]
        check(f"{name}: every field with its type", not missing, f"missing or mistyped {missing}")
        raw = image[:-3] if image.endswith(".xz") else image
        raw_size = os.stat(raw).st_size
        raw_sha = subprocess.run(["sha256sum", raw], capture_output=True, text=True, check=True).stdout.split()[0]
        check(f"{name}: extract_size is the raw image's ({raw_size} bytes)", e.get("extract_size") == raw_size, e.get("extract_size"))
        check(f"{name}: extract_sha256 is the raw image's ({raw_sha[:16]}…)", e.get("extract_sha256") == raw_sha, e.get("extract_sha256"))
        if image.endswith(".xz"):
            listing = subprocess.run(["xz", "--robot", "--list", image], capture_output=True, text=True, check=True).stdout
            totals = [l.split("\t") for l in listing.splitlines() if l.startswith("totals\t")]
            check(f"{name}: the .xz decompresses to extract_size bytes", bool(totals) and int(totals[0][4]) == e.get("extract_size"), totals)
        path = local(e.get("url", ""))
        where = path if path else image
        check(f"{name}: image_download_size is the size of the file the url names", os.path.exists(where) and os.stat(where).st_size == e.get("image_download_size"),
              f"{where}: {os.path.exists(where) and os.stat(where).st_size} vs {e.get('image_download_size')}")
        board = re.search(r"-(pi-zero-2w|pi4|pi5)\.img(\.xz)?$", name)
        check(f"{name}: devices is the board's Imager tag", board is not None and e.get("devices") == TAGS[board.group(1)], e.get("devices"))
        check(f"{name}: release_date is a date", re.fullmatch(r"\d{4}-\d{2}-\d{2}", str(e.get("release_date"))) is not None, e.get("release_date"))
        icon = local(e.get("icon", ""))
        if icon:
            with open(icon, "rb") as f:
                check(f"{name}: the icon is a PNG", f.read(8) == b"\x89PNG\r\n\x1a\n", icon)
        check(f"{name}: no init_format (Imager offers no customisation)", "init_format" not in e, e.get("init_format"))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
