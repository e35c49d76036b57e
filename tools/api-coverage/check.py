#!/usr/bin/env python3
"""Type-check every name of names.tsv against GraphKit's AVFoundation, CoreMedia and CoreVideo modules,
with Apple's signature where names.tsv has Apple's declaration, and print the usage-weighted share of
names that compile.  Failing names, with their weights, go to failing.tsv (or the path given with -o).

    tools/api-coverage/check.py [-o failing.tsv] [--repo /work/main] [--jobs 8]

Never builds: it reads the modules an earlier `swift build` left in <repo>/.build/<triple>/debug/Modules
(retrying a while if a build is rewriting them)."""
import os, re, sys, glob, subprocess, tempfile, time, argparse, concurrent.futures

HERE = os.path.dirname(os.path.abspath(__file__))
# Apple's modules a media program imports; those GraphKit builds are imported, the others stay out
# (their names then fail, as they would in a program that imports them)
APPLE_MODULES = ["AVFoundation", "CoreMedia", "CoreVideo", "AVFAudio", "CoreAudioTypes", "ImageIO",
                 "UniformTypeIdentifiers", "CoreGraphics", "CoreImage", "CoreServices"]
IMPORTS = "import Foundation\n"

WAIT = True  # for a build that is rewriting the modules; off under --min (make test: the build is done)

def flags(repo):
    for _ in range(60 if WAIT else 1):
        mods = sorted(glob.glob(os.path.join(repo, ".build", "*", "debug", "Modules", "AVFoundation.swiftmodule")))
        if mods: break
        if WAIT: time.sleep(10)
    else:
        sys.exit("no AVFoundation.swiftmodule under .build/*/debug/Modules: build GraphKit first")
    moddir = os.path.dirname(mods[0]); debug = os.path.dirname(moddir)
    global IMPORTS
    IMPORTS = "import Foundation\n" + "".join(f"import {m}\n" for m in APPLE_MODULES
                                             if os.path.exists(os.path.join(moddir, m + ".swiftmodule")))
    f = ["-I", moddir]
    for mm in glob.glob(os.path.join(debug, "*.build", "module.modulemap")) + \
              glob.glob(os.path.join(repo, "Sources", "*", "module.modulemap")):
        f += ["-Xcc", "-fmodule-map-file=" + mm]
    try:
        inc = subprocess.run(["pkg-config", "--cflags-only-I", "gstreamer-1.0", "gstreamer-app-1.0",
                              "gstreamer-video-1.0", "gstreamer-audio-1.0", "gstreamer-pbutils-1.0"],
                             capture_output=True, text=True).stdout.split()
    except FileNotFoundError:
        inc = []
    for i in inc: f += ["-Xcc", i]
    return f

def fix_type(t):
    t = t.replace("dispatch_queue_t", "DispatchQueue").replace("@Sendable", "").strip()
    t = re.sub(r"\bNSErrorPointer\b", "NSErrorPointer", t)
    return t

def params_of(decl):
    i = decl.find("(")
    if i < 0: return []
    depth, j, start, parts = 0, i, i + 1, []
    while j < len(decl):
        ch = decl[j]
        if ch in "([<": depth += 1
        elif ch in ")]>" and not (ch == ">" and decl[j-1] == "-"):
            depth -= 1
            if depth == 0: parts.append(decl[start:j]); break
        elif ch == "," and depth == 1: parts.append(decl[start:j]); start = j + 1
        j += 1
    out = []
    for p in parts:
        p = p.strip()
        if not p: continue
        m = re.match(r"(\w+)(?:\s+(\w+))?\s*:\s*(.+?)(?:\s*=\s*.*)?$", p)
        if not m: return None
        ty = m.group(3).strip()
        if ty.startswith("isolated"): continue          # isolation: #isolation, defaulted
        out.append((m.group(1), fix_type(ty)))
    return out

def after_params(decl):
    """The text after the parameter list: effects and result."""
    i = decl.find("(")
    depth = 0
    for j in range(i, len(decl)):
        if decl[j] == "(": depth += 1
        elif decl[j] == ")":
            depth -= 1
            if depth == 0: return decl[j+1:]
    return ""

def split_name(name):
    depth, cut = 0, -1
    for i, ch in enumerate(name):
        if ch == "(": depth += 1
        elif ch == ")": depth -= 1
        elif ch == "." and depth == 0: cut = i
    return (name[:cut], name[cut+1:]) if cut >= 0 else ("", name)

def is_struct_like(owner):
    return bool(re.match(r"(CM|CG|UTType|AVFileType|AVMediaType|AVVideoCodecType|AVMetadata|CVPixelBufferLockFlags)", owner))

GENERIC_BARE = re.compile(r"\b(UnsafeMutablePointer|UnsafePointer|UnsafeBufferPointer|UnsafeMutableBufferPointer|Unmanaged|"
                          r"AutoreleasingUnsafeMutablePointer|AVAsyncProperty|AVPartialAsyncProperty|Array|Dictionary|Set)\b(?!\s*<)")
LOAD_PROBE = {"AVAsset": ".duration", "AVURLAsset": ".duration", "AVAssetTrack": ".naturalSize", "AVMetadataItem": ".value",
              "AVComposition": ".duration", "AVMutableComposition": ".duration"}

def snippets(name, kind, decls, n):
    """Alternatives (Swift source, each one declaration) for one name; it passes if any one compiles:
    one per overload of Apple's, or the reference forms when no declaration of Apple's is known."""
    out = []
    for k, d in enumerate([d for d in decls.split(" ;; ") if d] or [""]):
        alts = snippets1(name, kind, d, f"{n}_{k}")
        if not d or not alts[0].startswith("func _c") or "_ = " not in alts[0] or True:
            out += alts
    # several overloads give the same fallback forms: keep one of each
    seen, res = set(), []
    for a in out:
        key = re.sub(r"_c\w+|_T\w+", "", a)
        if key not in seen: seen.add(key); res.append(a)
    return res

def snippets1(name, kind, decl, n):
    owner, member = split_name(name)
    fn = f"_c{n}"
    decl = decl.strip()
    alts = []
    generic = "<" in decl.split("(")[0] or bool(GENERIC_BARE.search(decl))
    mload = re.match(r"(\w+)\.load\(_:(?:isolation:)?\)$", name)
    if mload and mload.group(1) in LOAD_PROBE:
        return [f"func {fn}(_ o: {mload.group(1)}) async throws {{ _ = try await o.load({LOAD_PROBE[mload.group(1)]}) }}"]
    if kind in ("Class", "Structure", "Enumeration", "Protocol", "Type Alias") or (not owner and re.match(r"[A-Z]\w*$", name) and not decl):
        if kind == "Name" and re.match(r"k[A-Z]", name):
            return [f"func {fn}() {{ _ = {name} }}"]
        return [f"typealias _T{n} = {name}"]
    m = re.match(r"(\w+(?:\.\w+)*)\.load\(\.(\w+)\)$", name)
    if m:
        o, prop = m.groups()
        ty = decl_prop_type(o, prop)
        lhs = f"let _: {ty}" if ty else "_"
        return [f"func {fn}(_ o: {o}) async throws {{ {lhs} = try await o.load(.{prop}) }}"]
    if decl and not generic and kind in ("Global Variable",):
        mm = re.match(r"(?:let|var)\s+\w+\s*:\s*([^{]+)", decl)
        if mm: alts.append(f"func {fn}() {{ let _: {fix_type(mm.group(1).strip())} = {name} }}")
    if decl and not generic and kind in ("Instance Property", "Type Property"):
        mm = re.match(r"(?:(?:static|class)\s+)?(?:let|var)\s+\w+\s*:\s*(.+?)(\s*\{\s*get\s*\}|\s*\{\s*get set\s*\})?$", decl)
        if mm:
            ty = fix_type(mm.group(1).strip())
            settable = decl.startswith("var") and not (mm.group(2) and "set" not in mm.group(2))
            if kind == "Type Property":
                alts.append(f"func {fn}() {{ let _: {ty} = {owner}.{member} }}")
            else:
                body = f"let _: {ty} = o.{member}"
                if settable:
                    body += f"; var o = o; o.{member} = v; _ = o"
                    alts.append(f"func {fn}(_ o: {owner}, _ v: {ty}) {{ {body} }}")
                else:
                    alts.append(f"func {fn}(_ o: {owner}) {{ {body} }}")
    if decl and kind in ("Case", "Enumeration Case"):
        alts.append(f"func {fn}() {{ let _: {owner} = .{member} }}")
    if decl and not generic and kind in ("Instance Method", "Type Method", "Function", "Initializer"):
        ps = params_of(decl)
        if ps is not None:
            tail = after_params(decl)
            is_async = " async" in " " + tail.split("->")[0]
            throws = "throws" in tail.split("->")[0] or "rethrows" in tail.split("->")[0]
            res = tail.split("->", 1)[1].strip() if "->" in tail else None
            args, fparams = [], []
            for i, (label, ty) in enumerate(ps):
                if ty == "NSErrorPointer":       # callers pass nil or &error
                    args.append(("" if label == "_" else label + ": ") + "nil"); continue
                fparams.append(f"_ a{i}: {ty if ty.startswith('@escaping') or '->' not in ty or ty.endswith('?') or ty.startswith('(') and ty.endswith(')?') else '@escaping ' + ty}")
                args.append(("" if label == "_" else label + ": ") + f"a{i}")
            eff = (" async" if is_async else "") + (" throws" if throws else "")
            call_pre = ("try " if throws else "") + ("await " if is_async else "")
            if kind == "Initializer":
                failable = decl.startswith("init?") or decl.startswith("convenience init?")
                recv = f"{owner}({', '.join(args)})"
                lhs = f"let _: {owner}{'?' if failable else ''} = "
                sig = ", ".join(fparams)
            elif kind == "Function":
                recv = f"{member.split('(')[0]}({', '.join(args)})"
                lhs = f"let _: {fix_type(res)} = " if res else "_ = "
                sig = ", ".join(fparams)
            elif kind == "Type Method":
                recv = f"{owner}.{member.split('(')[0]}({', '.join(args)})"
                lhs = f"let _: {fix_type(res)} = " if res else "_ = "
                sig = ", ".join(fparams)
            else:
                recv = f"o.{member.split('(')[0]}({', '.join(args)})"
                lhs = f"let _: {fix_type(res)} = " if res else "_ = "
                sig = ", ".join([f"_ o: {owner}"] + fparams)
            alts.append(f"func {fn}({sig}){eff} {{ {lhs}{call_pre}{recv} }}")
    if alts:
        return alts
    # no declaration of Apple's here: the name itself, in the forms real code uses it
    if not owner:
        return [f"func {fn}() {{ _ = {name} }}"]
    if "(" in member:
        base = member.split("(")[0]
        if base == "init" and member == "init()":
            return [f"func {fn}() {{ _ = {owner}() }}"]
        if member == "init(_:)":      # numeric conversions (CMTimeValue(x), CMTimeScale(x)) have no page of their own
            return [f"func {fn}() {{ _ = {owner}.{member} }}", f"func {fn}b(_ v: Int) {{ _ = {owner}(v) }}",
                    f"func {fn}c(_ v: Double) {{ _ = {owner}(v) }}"]
        return [f"func {fn}() {{ _ = {owner}.{member} }}",
                f"func {fn}b(_ o: {owner}) {{ _ = o.{member} }}"]
    if re.match(r"[A-Z]", member):
        return [f"typealias _T{n} = {name}"]
    return [f"func {fn}() {{ _ = {owner}.{member} }}",
            f"func {fn}b(_ o: {owner}) {{ _ = o.{member} }}"]

DECLS = {}
def decl_prop_type(owner, prop):
    for o in (owner, "AVAsset", "AVAssetTrack", "AVMetadataItem"):
        d = DECLS.get(f"{o}.{prop}")
        if d:
            mm = re.match(r"(?:let|var)\s+\w+\s*:\s*(.+?)(\s*\{.*\})?$", d)
            if mm: return fix_type(mm.group(1).strip())
    return None

def typecheck(src, fl, workdir, tag):
    path = os.path.join(workdir, f"{tag}.swift")
    open(path, "w").write(IMPORTS + src)
    for attempt in range(10 if WAIT else 1):
        r = subprocess.run(["swiftc", "-typecheck", "-swift-version", "5", "-suppress-warnings"] + fl + [path],
                           capture_output=True, text=True)
        out = r.stdout + r.stderr
        if "no such module" in out or "missing required module" in out or "could not build" in out and "module" in out:
            time.sleep(15); continue          # a build is rewriting the modules
        return r.returncode, out, path
    return r.returncode, out, path

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-o", default="/tmp/avf-coverage/failing.tsv")
    ap.add_argument("--repo", default=os.path.abspath(os.path.join(HERE, "..", "..")))
    ap.add_argument("--names", default=os.path.join(HERE, "names.tsv"))
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 4)
    ap.add_argument("--min", type=float, help="fail (exit 1) when the usage-weighted coverage is below this percentage (make test)")
    a = ap.parse_args()
    global WAIT
    WAIT = a.min is None
    fl = flags(a.repo)
    os.makedirs(os.path.dirname(os.path.abspath(a.o)), exist_ok=True)
    rows = [l.rstrip("\n").split("\t") for l in open(a.names)][1:]
    for mod, name, cnt, kind, decl in rows:
        if decl: DECLS[name] = decl
    items = []
    for n, (mod, name, cnt, kind, decl) in enumerate(rows):
        items.append((mod, name, int(cnt), snippets(name, kind, decl, n)))
    work = tempfile.mkdtemp(prefix="avf-check-")
    # one file with every alternative, each its own declaration: errors name the lines that fail
    lines, owner_of_line, src = [], {}, []
    base = IMPORTS.count("\n")
    for i, (_, _, _, alts) in enumerate(items):
        for k, s in enumerate(alts):
            owner_of_line[base + len(src) + 1] = (i, k)
            src.append(s)
    rc, out, path = typecheck("\n".join(src) + "\n", fl, work, "all")
    bad = set()
    for m in re.finditer(re.escape(path) + r":(\d+):\d+: error:", out):
        ln = int(m.group(1))
        if ln in owner_of_line: bad.add(owner_of_line[ln])
    errs_elsewhere = rc != 0 and not bad
    # every alternative that failed (or all, if the errors could not be placed) is tried on its own
    retry = [(i, k) for i, it in enumerate(items) for k in range(len(it[3]))
             if errs_elsewhere or (i, k) in bad]
    ok_alone = set()
    def one(ik):
        i, k = ik
        rc, out, _ = typecheck(items[i][3][k] + "\n", fl, work, f"n{i}_{k}")
        return ik, rc == 0, out
    with concurrent.futures.ThreadPoolExecutor(a.jobs) as ex:
        for ik, ok, out in ex.map(one, retry):
            if ok: ok_alone.add(ik)
    retried = set(retry)
    passed, failed = [], []
    for i, (mod, name, cnt, alts) in enumerate(items):
        good = any(((i, k) not in retried) or ((i, k) in ok_alone) for k in range(len(alts)))
        (passed if good else failed).append((mod, name, cnt))
    total = sum(c for _, _, c in passed + failed)
    ok = sum(c for _, _, c in passed)
    with open(a.o, "w") as f:
        f.write("module\tname\tfiles\n")
        for mod, name, cnt in sorted(failed, key=lambda x: (-x[2], x[1])):
            f.write(f"{mod}\t{name}\t{cnt}\n")
    print(f"names: {len(items)}, compile: {len(passed)}, fail: {len(failed)}")
    print(f"usage-weighted coverage: {100.0 * ok / total:.1f}% ({ok} of {total} file-uses)")
    print(f"failing names with their weights: {a.o}  (generated Swift: {work})")
    if a.min is not None and 100.0 * ok / total < a.min:
        print(f"api-coverage: {100.0 * ok / total:.1f}% is below the floor of {a.min}% (Makefile, API_COVERAGE_FLOOR): a name that compiled no longer does")
        sys.exit(1)

if __name__ == "__main__":
    main()
