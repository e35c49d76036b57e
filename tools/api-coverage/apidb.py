#!/usr/bin/env python3
"""Apple's API names and Swift declarations, from a stored copy of Apple's documentation pages
(theAppLaunchers/apple-docs-for-rag, one Markdown page per symbol), unpacked under /tmp/avf-apidocs.
Gives: entries[qualified name] = {module, owner, title, kind, decl}; supers[class] = superclass."""
import os, re, json, glob, sys

DOCS = os.environ.get("AVF_APIDOCS", "/tmp/avf-apidocs")
MODNAME = {"Core Media": "CoreMedia", "Core Video": "CoreVideo", "Image I/O": "ImageIO", "Core Graphics": "CoreGraphics",
           "Core Image": "CoreImage", "Core Audio Types": "CoreAudioTypes", "AVFAudio": "AVFAudio", "AVFoundation": "AVFoundation"}

def parse(path):
    text = open(path, errors="replace").read()
    lines = text.split("\n")
    crumbs, i = [], 0
    while i < len(lines) and not lines[i].strip(): i += 1
    while i < len(lines) and lines[i].startswith("- "):
        crumbs.append(lines[i][2:].strip().replace("\\_", "_")); i += 1
    if len(crumbs) < 2: return None
    while i < len(lines) and not lines[i].strip(): i += 1
    kind = lines[i].strip() if i < len(lines) else ""
    m = re.search(r"``` source\n(.*?)\n```", text, re.S)
    decl = re.sub(r"\s+", " ", m.group(1)).strip() if m else ""
    decl = decl.replace("( ", "(").replace(" )", ")")
    sup = None
    m2 = re.search(r"### Inherits From\n\n- (\w+)", text)
    if m2: sup = m2.group(1)
    module = MODNAME.get(crumbs[0], crumbs[0].replace(" ", ""))
    title = crumbs[-1]
    owner = crumbs[-2] if len(crumbs) > 2 else ""
    return dict(module=module, owner=owner, title=title, kind=kind, decl=decl, sup=sup)

def build():
    entries, supers = {}, {}
    for path in glob.glob(os.path.join(DOCS, "*", "md", "*.md")):
        e = parse(path)
        if not e or not e["decl"].strip(): continue
        if e["decl"].startswith(("@interface", "typedef", "extern", "#define", "CF_", "- (", "+ (")): continue
        q = (e["owner"] + "." if e["owner"] else "") + e["title"]
        q = q.replace(" Deprecated", "").strip()
        e["title"] = e["title"].replace(" Deprecated", "").strip()
        if q in entries:        # an overload: the same name, another declaration
            if any(x["decl"] == e["decl"] for k, x in entries.items() if k.split("#")[0] == q): continue
            n = 2
            while f"{q}#{n}" in entries: n += 1
            q = f"{q}#{n}"
        entries[q] = e
        if e["sup"] and not e["owner"]: supers[e["title"]] = e["sup"]
    return entries, supers

if __name__ == "__main__":
    entries, supers = build()
    json.dump({"entries": entries, "supers": supers}, open(sys.argv[1] if len(sys.argv) > 1 else "/tmp/avf-apidb.json", "w"))
    print(len(entries), "entries,", len(supers), "classes with a superclass", file=sys.stderr)
