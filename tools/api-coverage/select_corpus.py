#!/usr/bin/env python3
"""Pick corpus files from fetched mirrors (/work/.mirror/<owner>+<name>/repo) by the rule in README.md."""
import os, re, subprocess, sys, collections

MIRROR = "/work/.mirror"
OUT = "/tmp/avf-corpus"
PROC = re.compile(r'AVAssetReader|AVAssetWriter|AVAssetExportSession|AVAssetImageGenerator|AVMutableComposition|'
                  r'AVMutableVideoComposition|AVVideoComposition|AVMutableAudioMix|AVAudioMix|AVMetadataItem|AVMutableMetadataItem|'
                  r'loadValuesAsynchronously|\.load\(\.|loadTracks\(|CMSampleBufferGet|CVPixelBufferCreate|CVPixelBufferLockBaseAddress|'
                  r'CGImageDestination|CGImageSource')
UI = re.compile(r'\bAVPlayer|AVPlayerLayer|AVCaptureVideoPreviewLayer|^\s*import\s+SwiftUI|\bUIViewController\b|\bNSViewController\b|'
                r'\bUITableView|\bUICollectionView|:\s*View\s*\{|\bAVPlayerViewController', re.M)
IMPORT = re.compile(r'^\s*(@preconcurrency\s+)?import\s+(AVFoundation|CoreMedia|CoreVideo|AVKit)\b', re.M)
VENDORED = re.compile(r'(^|/)(Pods|Carthage|Vendor|vendor|ThirdParty|third_party|node_modules|\.build)/')
PER_REPO = 8

def git(repo, *args):
    return subprocess.run(["git", "-C", repo] + list(args), capture_output=True, text=True, errors="replace").stdout

def tokens(text):
    return set(re.findall(r'[A-Za-z_][A-Za-z0-9_]*', text))

def main():
    repos = sorted(d for d in os.listdir(MIRROR) if os.path.isdir(os.path.join(MIRROR, d, "repo")))
    skip = set(sys.argv[1:])  # repositories to leave out (documentation-only mirrors)
    cands = []
    for d in repos:
        if d in skip: continue
        repo = os.path.join(MIRROR, d, "repo")
        commit = git(repo, "rev-parse", "HEAD").strip()
        if not commit: continue
        for p in git(repo, "ls-tree", "-r", "--name-only", "HEAD").splitlines():
            if not p.endswith(".swift") or VENDORED.search(p): continue
            text = git(repo, "show", f"HEAD:{p}")
            if not IMPORT.search(text): continue
            hits = len(PROC.findall(text))
            if hits == 0 or UI.search(text): continue
            cands.append((d.replace("+", "/", 1), commit, p, hits, text))
    # drop near-duplicate copies of one file in several repositories (vendored without a Pods folder)
    keep, seen = [], []
    for c in sorted(cands, key=lambda c: (-c[3], c[0], c[2])):
        tk = tokens(c[4])
        dup = False
        for (name, tks) in seen:
            if os.path.basename(c[2]) == name or len(tk & tks) / max(1, len(tk | tks)) > 0.85:
                if len(tk & tks) / max(1, len(tk | tks)) > 0.6:
                    dup = True; break
        if dup: continue
        seen.append((os.path.basename(c[2]), tk))
        keep.append(c)
    per = collections.defaultdict(list)
    for c in keep: per[c[0]].append(c)
    rows = []
    for r, cs in sorted(per.items()):
        for c in sorted(cs, key=lambda c: (-c[3], c[2]))[:PER_REPO]:
            rows.append(c)
    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "sources.tsv"), "w") as f:
        f.write("repository\tpath\tcommit\n")
        for (r, commit, p, hits, text) in sorted(rows, key=lambda c: (c[0].lower(), c[2])):
            f.write(f"{r}\t{p}\t{commit}\n")
            dst = os.path.join(OUT, r.replace("/", "+"), p)
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            open(dst, "w").write(text)
    print(f"{len(rows)} files from {len(set(r[0] for r in rows))} repositories", file=sys.stderr)

if __name__ == "__main__":
    main()
