#!/usr/bin/env python3
"""What libtokentrace exports, read with nm.

usage: check_symbols.py LIBTOKENTRACE.a LIBTOKENTRACE.so ROOT

- static library: every defined global symbol starts with tt_ (tt__ for
  internals shared between the library's files), so none can clash with a
  program that links it;
- shared library: exports only tt_ names with one underscore, each declared
  in an installed header (include/tokentrace/; the programs' unstable
  protocol API, src/lib/protocol/, is hidden: the programs link the static
  library), and every function the installed headers declare is exported;
- no tt__ internal is declared in an installed header.
Exit 1 with one line per problem."""
import glob
import os
import re
import subprocess
import sys


def nm(args):
    out = subprocess.run(["nm"] + args, check=True, capture_output=True, text=True).stdout
    syms = set()
    for line in out.splitlines():
        parts = line.split()
        # "address type name"; undefined symbols have no address
        # AddressSanitizer adds '__odr_asan.<global>' beside each global it
        # instruments; the global itself is checked, the marker is not ours
        if len(parts) == 3 and parts[1] not in "Uuvw" and not parts[2].startswith("__odr_asan"):
            syms.add(parts[2].split("@")[0])
    return syms


def declared(paths):
    names = set()
    for p in paths:
        text = open(p, encoding="utf-8").read()
        text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
        # static inline functions are compiled into the caller, never exported
        text = re.sub(r"static inline [^;{]*\{.*?\n\}", " ", text, flags=re.S)
        names |= set(re.findall(r"\b(tt_[a-z0-9_]+)\s*\(", text))
    return names


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    a, so, root = sys.argv[1:]
    bad = []
    static = nm(["-g", "--defined-only", a])
    for s in sorted(static):
        if not s.startswith("tt_"):
            bad.append(f"{os.path.basename(a)}: '{s}' is exported without the tt_ prefix "
                       "(make it static, or name it tt__ if other library files need it)")
    installed = sorted(glob.glob(os.path.join(root, "include", "tokentrace", "*.h")))
    protocol = sorted(glob.glob(os.path.join(root, "src", "lib", "protocol", "*.h")))
    public = declared(installed)
    unstable = declared(protocol)
    for s in sorted(public | unstable):
        if s.startswith("tt__"):
            bad.append(f"'{s}': an internal (tt__) name is declared in a public header")
    dynamic = nm(["-D", "--defined-only", so])
    for s in sorted(dynamic):
        if not s.startswith("tt_") or s.startswith("tt__"):
            bad.append(f"{os.path.basename(so)}: exports '{s}' (only the tt_ API may be exported)")
        elif s in unstable and s not in public:
            bad.append(f"{os.path.basename(so)}: exports '{s}', a protocol/ function with no "
                       "installed header (protocol headers keep their functions hidden)")
        elif s not in public:
            bad.append(f"{os.path.basename(so)}: exports '{s}', which no header of ours "
                       "declares (make it static or tt__)")
    for s in sorted(public - dynamic):
        bad.append(f"{os.path.basename(so)}: '{s}' is declared in include/tokentrace/ "
                   "but not exported")
    internal = sorted(s for s in static if s.startswith("tt__"))
    for b in bad:
        print(b)
    print(f"{len(static)} symbols in the static library ({len(internal)} tt__ internals), "
          f"{len(dynamic)} exported by the shared library, {len(public)} declared public, "
          f"{len(unstable)} protocol: {'FAIL' if bad else 'ok'}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
