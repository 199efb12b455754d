#!/usr/bin/env python3
"""Checks the module floors three ways, so that the code, Package.swift and
docs/architecture.md say the same thing:

1. every `import` of one of our modules (or of a C target) in a target's
   sources is a dependency that Package.swift declares for that target;
2. each Swift target's declared dependencies are the ones the floors table
   of docs/architecture.md lists for it ("depends on (ours; C)");
3. each module's floor in that table is one above the highest floor of its
   dependencies (0 with none), so no module reaches up or sideways.

Prints one sentence per mismatch and exits 1; prints a summary and exits 0
when all agree. Run by `make test`.
"""
import json, pathlib, re, subprocess, sys

root = pathlib.Path(__file__).resolve().parent.parent
package = json.loads(subprocess.run(["swift", "package", "dump-package"], cwd=root, check=True,
                                    capture_output=True, text=True).stdout)
targets = {t["name"]: t for t in package["targets"]}

def dependencies(target):
    names = set()
    for d in target.get("dependencies", []):
        for key in ("byName", "target", "product"):
            if key in d:
                names.add(d[key][0])
    return names

def source_folder(target):
    if target.get("path"):
        return root / target["path"]
    return root / ("Tests" if target["type"] == "test" else "Sources") / target["name"]

problems = []
import_line = re.compile(r"^(?:@\w+(?:\([^)]*\))?\s+)*(?:(?:public|package|internal|private|fileprivate)\s+)?import\s+(\w+)", re.M)
for name, target in targets.items():
    if target["type"] == "system":
        continue
    declared = dependencies(target)
    for path in sorted(source_folder(target).rglob("*.swift")):
        for module in set(import_line.findall(path.read_text())):
            if module in targets and module != name and module not in declared:
                problems.append(f"{path.relative_to(root)} imports {module}, which Package.swift does not declare for {name}.")

# The floors table: | `Module` | floor | `Dep`, `Dep`; `CDep` | what | imported by |
doc = root / "docs" / "architecture.md"
table = {}
for line in doc.read_text().splitlines():
    cells = [c.strip() for c in line.strip().strip("|").split("|")]
    if len(cells) >= 3 and re.fullmatch(r"`[\w-]+`", cells[0]) and re.fullmatch(r"\d+", cells[1]):
        listed = set(re.findall(r"`([\w-]+)`", cells[2]))
        table[cells[0].strip("`")] = (int(cells[1]), listed)

# Swift modules: C targets (the shims, CPhoneNumber) are listed with the C libraries, not on a floor.
swift_targets = {n: t for n, t in targets.items()
                 if t["type"] in ("regular", "executable") and any(source_folder(t).rglob("*.swift"))}
floors = {}
def floor(name):
    if name not in floors:
        deps = [d for d in dependencies(targets[name]) if d in swift_targets]
        floors[name] = 1 + max((floor(d) for d in deps), default=-1)
    return floors[name]

for name, target in sorted(swift_targets.items()):
    if name not in table:
        problems.append(f"docs/architecture.md has no row for the module {name}.")
        continue
    listed_floor, listed = table[name]
    declared = dependencies(target)
    if listed != declared:
        missing, extra = sorted(declared - listed), sorted(listed - declared)
        problems.append(f"docs/architecture.md lists {name}'s dependencies wrong: "
                        + "; ".join(filter(None, [missing and f"missing {', '.join(missing)}", extra and f"not declared {', '.join(extra)}"])) + ".")
    if listed_floor != floor(name):
        problems.append(f"docs/architecture.md puts {name} on floor {listed_floor}; its dependencies put it on floor {floor(name)}.")
for name in sorted(set(table) - set(swift_targets)):
    problems.append(f"docs/architecture.md has a row for {name}, which Package.swift does not build.")

if problems:
    print("\n".join(problems))
    sys.exit(1)
print(f"floors: {len(swift_targets)} modules, their imports, Package.swift and docs/architecture.md agree")
