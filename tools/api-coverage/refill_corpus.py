#!/usr/bin/env python3
"""Refill /tmp/avf-corpus (the corpus files, by sources.tsv) and /tmp/avf-apidocs (Apple's documentation
pages apidb.py reads) from git.  Nothing of either is kept in this repository.

For each repository it uses a snapshot already on this machine (/work/.mirror/<owner>+<name>/repo, as the
search tool's `fetch` leaves it) and otherwise clones https://github.com/<owner>/<name> into /tmp/avf-repos.
A file is taken at the commit sources.tsv names; if that commit is gone, the newest one is used and said."""
import os, subprocess, sys, collections

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.environ.get("AVF_CORPUS", "/tmp/avf-corpus")
DOCS = os.environ.get("AVF_APIDOCS", "/tmp/avf-apidocs")
DOCS_REPO, DOCS_COMMIT = "theAppLaunchers/apple-docs-for-rag", "61312ac5fd829bfbe6c60a6fc3fcd8962f69cef7"
DOCS_DIRS = ["AVFoundation", "AVFAudio", "CoreMedia", "CoreVideo", "ImageIO", "CoreGraphics", "coreimage", "CoreAudioTypes"]

def repo_dir(repo):
    key = repo.replace("/", "+")
    for d in (f"/work/.mirror/{key}/repo", f"/tmp/avf-repos/{key}"):
        if os.path.isdir(d): return d
    d = f"/tmp/avf-repos/{key}"
    os.makedirs(os.path.dirname(d), exist_ok=True)
    subprocess.run(["git", "clone", "--quiet", "--no-checkout", "--filter=blob:none",
                    f"https://github.com/{repo}.git", d], check=True)
    return d

def show(d, commit, path):
    r = subprocess.run(["git", "-C", d, "show", f"{commit}:{path}"], capture_output=True)
    if r.returncode == 0: return r.stdout
    r = subprocess.run(["git", "-C", d, "show", f"HEAD:{path}"], capture_output=True)
    if r.returncode == 0:
        print(f"{path}: commit {commit[:10]} not here, took HEAD", file=sys.stderr); return r.stdout
    return None

def main():
    rows = [l.rstrip("\n").split("\t") for l in open(os.path.join(HERE, "sources.tsv"))][1:]
    missing = 0
    for repo, path, commit in rows:
        d = repo_dir(repo)
        data = show(d, commit, path)
        if data is None:
            print(f"missing: {repo} {path}", file=sys.stderr); missing += 1; continue
        dst = os.path.join(CORPUS, repo.replace("/", "+"), path)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        open(dst, "wb").write(data)
    d = repo_dir(DOCS_REPO)
    os.makedirs(DOCS, exist_ok=True)
    commit = DOCS_COMMIT if subprocess.run(["git", "-C", d, "cat-file", "-e", DOCS_COMMIT]).returncode == 0 else "HEAD"
    p1 = subprocess.Popen(["git", "-C", d, "archive", commit] + DOCS_DIRS, stdout=subprocess.PIPE)
    subprocess.run(["tar", "-x", "-C", DOCS], stdin=p1.stdout, check=True)
    print(f"{len(rows) - missing} corpus files in {CORPUS}, documentation pages in {DOCS}", file=sys.stderr)

if __name__ == "__main__":
    main()
