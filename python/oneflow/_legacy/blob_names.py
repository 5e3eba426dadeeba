"""0.x's names of blobs: ``blob.logical_blob_name`` (``"op_name/blob_name"``), ``op_name``,
``blob_name``, ``unique_name`` and ``job_name``, and the lookup of a blob by its logical name
(``CustomScheduler(lbn)``, optimizer.py).

0.x named every op of a job (its ``name=`` or an automatic one) and a blob was an op's output,
``"<op>/<output>"``. Blobs here are tensors that no op owns, so the names are given as scripts ask
for them: a variable is the output of its variable op, ``"<variable name>/out"``, as in 0.x (inside
and outside jobs); another blob of a job is named the first time a script reads one of its names
in that call, ``"<job function>-blob_<k>/out"`` for the call's k-th blob so named. A job's Python
runs the same way at each trace or eager call, so the k-th blob is the same one in each, and a
name read in one call finds that call's blob. The call keeps its name -> blob map (the job's
``blob_names``), which ``lookup`` reads. A tensor outside jobs that is no variable has no op and
no name: reading one raises NoBlobName, a RuntimeError saying so that is an AttributeError too
(``hasattr(t, "op_name")`` is False there, and code listing a tensor's attributes goes on). ``unique_name`` is the name and the blob's
distribution as 0.x wrote it (``":S0"`` for a global tensor split along dim 0, ``":B"``
broadcast; a local blob none, 0.x's automatic distribution).
"""
from .._export import export_value
from ._job_state import current_job


class NoBlobName(AttributeError, RuntimeError):
    """A tensor outside job functions that is no variable has no 0.x name."""


def _variable_name(t):
    from .variables import get_all_variables
    for name, v in get_all_variables().items():
        if v is t:
            return name
    return None


def logical_blob_name(t):
    """`t`'s logical name "op/out" (naming it in its job when it has none yet)."""
    name = _variable_name(t)
    if name is not None:
        return f"{name}/out"
    job = current_job()
    if job is None:
        raise NoBlobName("logical_blob_name: a tensor outside job functions has no op; only variables and the "
                         "blobs of a job function have 0.x's names")
    names = job.blob_names
    for lbn, blob in names.items():
        if blob is t:
            return lbn
    lbn = f"{job.fn.name}-blob_{len(names)}/out"
    names[lbn] = t  # (kept alive: the name stays this blob's)
    return lbn


def lookup(job, lbn):
    """The blob of `job` named `lbn` ("op/out" or a variable's "name"), or None."""
    op = lbn[:-len("/out")] if lbn.endswith("/out") else lbn
    var = job.variables.get(op)
    if var is not None:
        return var
    return job.blob_names.get(lbn if lbn.endswith("/out") else f"{lbn}/out")


def _unique_name(t):
    lbn = logical_blob_name(t)
    if not t.is_global or len(t.sbp) != 1:
        return lbn
    from .. import sbp
    s = t.sbp[0]
    if s == sbp.broadcast:
        return lbn + ":B"
    for d in range(t.ndim):
        if s == sbp.split(d):
            return lbn + f":S{d}"
    return lbn  # (a partial sum: 0.x's blobs had no such distribution)


def _job_name(t):
    job = current_job()
    if job is None:
        raise NoBlobName("job_name: a tensor outside job functions belongs to no job")
    logical_blob_name(t)  # (a blob of the job: it has a name in it)
    return job.fn.name


export_value(property(logical_blob_name), "Tensor.logical_blob_name")
export_value(property(lambda self: logical_blob_name(self).rpartition("/")[0]), "Tensor.op_name")
export_value(property(lambda self: logical_blob_name(self).rpartition("/")[2]), "Tensor.blob_name")
export_value(property(_unique_name), "Tensor.unique_name")
export_value(property(_job_name), "Tensor.job_name")
