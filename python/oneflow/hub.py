"""oneflow.hub: models published as a repository with a `hubconf.py` (OneFlow's and PyTorch's hub).

A hub repository is a directory whose `hubconf.py` defines entry points (callables returning a
model, a tokenizer, ...) and optionally `dependencies = ["module", ...]`. `load(dir, name,
source="local")` imports that hubconf and calls the entry; `source="github"` first fetches
`owner/repo[:ref]` as an archive into the hub cache (get_dir()), as upstream does. Weights come
through `load_state_dict_from_url`: downloaded once into `<hub dir>/checkpoints` (any URL urllib
reads, `file://` included, or a local path), optionally checked against the SHA-256 prefix in
the file name, then read with flow.load (so torch.save files and OneFlow's load too, safely).

Unlike upstream, a GitHub repository is not checked for being a fork or trusted through a
prompt: `trust_repo` is accepted and not asked about (loading a hubconf runs its code in any
case, which is what asking for it means). urllib, zipfile and hashlib are imported when first
needed, so that `import oneflow` does not pay for them.
"""
import importlib.util
import os
import re
import sys



class _SilentBar:
    """Progress without tqdm installed: tqdm's update/close/context-manager surface, silent."""

    def __init__(self, iterable=None, total=None, disable=False, **kwargs):
        self.iterable, self.total, self.n = iterable, total, 0

    def __iter__(self):
        for x in self.iterable:
            self.n += 1
            yield x

    def update(self, n=1):
        self.n += n

    def close(self):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _tqdm():
    try:
        from tqdm import tqdm
    except ImportError:  # pragma: no cover - tqdm is installed with the project
        return _SilentBar
    return tqdm


def __getattr__(name):
    # `from oneflow.hub import tqdm` (model-zoo code does): imported on first use, not with oneflow.
    if name == "tqdm":
        return _tqdm()
    raise AttributeError(f"module 'oneflow.hub' has no attribute '{name}'")


__all__ = ["download_url_to_file", "get_dir", "help", "list", "load", "load_state_dict_from_url",
           "set_dir"]

ENV_ONEFLOW_HOME = "ONEFLOW_HOME"
ENV_XDG_CACHE_HOME = "XDG_CACHE_HOME"
MODULE_HUBCONF = "hubconf.py"
VAR_DEPENDENCY = "dependencies"
_HASH = re.compile(r"-([a-f0-9]*)\.")

_hub_dir = None


def get_dir():
    """The hub cache: set_dir(...), else $ONEFLOW_HOME/hub, else $XDG_CACHE_HOME/oneflow/hub
    (default ~/.cache/oneflow/hub)."""
    if _hub_dir is not None:
        return _hub_dir
    home = os.getenv(ENV_ONEFLOW_HOME) or os.path.join(
        os.getenv(ENV_XDG_CACHE_HOME, os.path.join("~", ".cache")), "oneflow")
    return os.path.join(os.path.expanduser(home), "hub")


def set_dir(d):
    global _hub_dir
    _hub_dir = os.path.expanduser(os.fspath(d))


# ---------------------------------------------------------------------------------------------
# hubconf


def _import_hubconf(repo_dir):
    path = os.path.join(repo_dir, MODULE_HUBCONF)
    if not os.path.isfile(path):
        raise FileNotFoundError(f"oneflow.hub: no {MODULE_HUBCONF} in '{repo_dir}'")
    # hubconf imports its repository's own modules: the directory is on sys.path meanwhile.
    sys.path.insert(0, repo_dir)
    try:
        spec = importlib.util.spec_from_file_location(f"hubconf_{abs(hash(repo_dir))}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        try:
            sys.path.remove(repo_dir)
        except ValueError:
            pass
    missing = [m for m in (getattr(module, VAR_DEPENDENCY, None) or [])
               if importlib.util.find_spec(m) is None]
    if missing:
        raise RuntimeError(f"oneflow.hub: missing dependencies of '{repo_dir}': "
                           f"{', '.join(missing)}")
    return module


def _entry(module, model):
    if not isinstance(model, str):
        raise ValueError(f"oneflow.hub: the entry name must be a string, got {type(model).__name__}")
    fn = getattr(module, model, None)
    if fn is None or not callable(fn):
        raise RuntimeError(f"oneflow.hub: cannot find callable {model} in hubconf")
    return fn


def _entries(module):
    return [name for name in dir(module) if callable(getattr(module, name))
            and not name.startswith("_")]


# ---------------------------------------------------------------------------------------------
# GitHub repositories: fetched once as an archive into the hub cache


def _parse_repo(github):
    repo, _, ref = github.partition(":")
    owner, _, name = repo.partition("/")
    if not owner or not name or "/" in name:
        raise ValueError(f"oneflow.hub: '{github}' is not of the form repo_owner/repo_name[:ref]")
    return owner, name, ref or "main"


def _repo_dir(github, force_reload, verbose):
    import shutil
    import tempfile
    import zipfile
    owner, name, ref = _parse_repo(github)
    hub = get_dir()
    os.makedirs(hub, exist_ok=True)
    target = os.path.join(hub, "_".join((owner, name, ref.replace("/", "_"))))
    if os.path.isdir(target) and not force_reload:
        if verbose:
            sys.stderr.write(f"Using cache found in {target}\n")
        return target
    url = f"https://github.com/{owner}/{name}/zipball/{ref}"
    archive = os.path.join(hub, f"{ref.replace('/', '_')}.zip")
    try:
        download_url_to_file(url, archive, progress=False)
    except OSError as e:
        raise RuntimeError(f"oneflow.hub: cannot fetch {url} ({e}); for a repository already on "
                           "disk use load(path, model, source='local')") from e
    try:
        with zipfile.ZipFile(archive) as z:
            top = z.namelist()[0].split("/")[0]
            tmp = tempfile.mkdtemp(dir=hub)
            z.extractall(tmp)
        shutil.rmtree(target, ignore_errors=True)
        os.replace(os.path.join(tmp, top), target)
        shutil.rmtree(tmp, ignore_errors=True)
    finally:
        os.remove(archive)
    return target


def _resolve(repo_or_dir, source, force_reload=False, verbose=True):
    if source not in ("github", "local"):
        raise ValueError(f"oneflow.hub: unknown source '{source}' (expected 'github' or 'local')")
    if source == "local":
        if not os.path.isdir(repo_or_dir):
            raise FileNotFoundError(f"oneflow.hub: no such directory: '{repo_or_dir}'")
        return os.path.abspath(repo_or_dir)
    return _repo_dir(repo_or_dir, force_reload, verbose)


def list(github, force_reload=False, skip_validation=False, trust_repo=None, verbose=True,
         source="github"):
    """The entry points of a hub repository's hubconf.py (a local directory with
    source="local")."""
    return _entries(_import_hubconf(_resolve(github, source, force_reload, verbose)))


def help(github, model, force_reload=False, skip_validation=False, trust_repo=None,
         source="github"):
    """The docstring of the entry point `model`."""
    return _entry(_import_hubconf(_resolve(github, source, force_reload, False)), model).__doc__


def load(repo_or_dir, model, *args, source="github", trust_repo=None, force_reload=False,
         verbose=True, skip_validation=False, **kwargs):
    """Calls the entry point `model` of the repository's hubconf.py with *args, **kwargs.

    source="local": `repo_or_dir` is a directory holding hubconf.py; "github": `owner/repo[:ref]`,
    fetched once into get_dir()."""
    repo_dir = _resolve(repo_or_dir, source, force_reload, verbose)
    return _load_local(repo_dir, model, *args, **kwargs)


def _load_local(hubconf_dir, model, *args, **kwargs):
    module = _import_hubconf(hubconf_dir)
    sys.path.insert(0, hubconf_dir)  # entry points may import lazily from their repository
    try:
        return _entry(module, model)(*args, **kwargs)
    finally:
        try:
            sys.path.remove(hubconf_dir)
        except ValueError:
            pass


# ---------------------------------------------------------------------------------------------
# Files and weights


def _open_url(url):
    import urllib.request
    if os.path.exists(url):  # a local path
        return open(url, "rb"), os.path.getsize(url)
    req = urllib.request.Request(url, headers={"User-Agent": "oneflow.hub"})
    resp = urllib.request.urlopen(req)
    length = resp.headers.get("Content-Length") if hasattr(resp, "headers") else None
    return resp, int(length) if length and str(length).isdigit() else None


def download_url_to_file(url, dst, hash_prefix=None, progress=True):
    """Copies `url` (anything urllib opens, file:// included, or a local path) to `dst`,
    atomically (a temporary next to it, renamed when complete), checking that its SHA-256
    starts with `hash_prefix` if given."""
    import hashlib
    import tempfile
    dst = os.path.expanduser(os.fspath(dst))
    folder = os.path.dirname(os.path.abspath(dst))
    os.makedirs(folder, exist_ok=True)
    src, size = _open_url(url)
    sha = hashlib.sha256() if hash_prefix else None
    fd, tmp = tempfile.mkstemp(prefix=".download-", dir=folder)
    try:
        with src, os.fdopen(fd, "wb") as out, _tqdm()(total=size, disable=not progress, unit="B",
                                                   unit_scale=True, unit_divisor=1024) as bar:
            while True:
                chunk = src.read(1 << 20)
                if not chunk:
                    break
                out.write(chunk)
                if sha is not None:
                    sha.update(chunk)
                bar.update(len(chunk))
        if sha is not None and not sha.hexdigest().startswith(hash_prefix):
            raise RuntimeError(f"oneflow.hub: invalid hash value of {url} (expected "
                               f"'{hash_prefix}', got '{sha.hexdigest()}')")
        os.replace(tmp, dst)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def _unpack(path, model_dir):
    """A zip archive that is not torch.save's own zip format is how OneFlow's model zoo publishes
    weights (flowvision's `resnet18.zip` holds a checkpoint directory): extracted into model_dir
    as upstream does, and its first entry is what loads. Anything else loads as it is."""
    import zipfile
    if not zipfile.is_zipfile(path):
        return path
    with zipfile.ZipFile(path) as z:
        names = z.namelist()
        if any(n.endswith("/data.pkl") and n.count("/") == 1 for n in names):
            return path  # torch.save's zip: flow.load reads it directly
        top = names[0].lstrip("/").split("/")[0] if names else ""
        if top in ("", ".", ".."):
            raise RuntimeError(f"oneflow.hub: {path}: an archive without a checkpoint entry")
        z.extractall(model_dir)  # (zipfile drops absolute paths and '..' from member names)
    return os.path.join(model_dir, top)


def load_state_dict_from_url(url, model_dir=None, map_location=None, progress=True,
                             check_hash=False, file_name=None, weights_only=None):
    """The object saved at `url` (a state dict), downloaded once into `model_dir` (default
    <hub dir>/checkpoints) and read with flow.load. With check_hash, the file name's
    `name-<sha256 prefix>.ext` is verified on download."""
    import urllib.parse
    import urllib.request
    from .framework.serialization import load as load_checkpoint
    model_dir = os.path.expanduser(model_dir) if model_dir else os.path.join(get_dir(),
                                                                              "checkpoints")
    os.makedirs(model_dir, exist_ok=True)
    name = file_name or os.path.basename(urllib.request.url2pathname(
        urllib.parse.urlparse(url).path) if "://" in url else url)
    cached = os.path.join(model_dir, name)
    if not os.path.exists(cached):
        prefix = None
        if check_hash:
            m = _HASH.search(name)
            prefix = m.group(1) if m else None
        if progress:
            sys.stderr.write(f'Downloading: "{url}" to {cached}\n')
        download_url_to_file(url, cached, prefix, progress=progress)
    return load_checkpoint(_unpack(cached, model_dir), map_location=map_location)
