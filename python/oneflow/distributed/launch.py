"""python -m oneflow.distributed.launch [options] script.py [script args]: starts nproc_per_node
processes of the script on this node (OneFlow's and PyTorch's launcher), each with the
environment init_process_group("gloo") / env:// reads: MASTER_ADDR, MASTER_PORT, WORLD_SIZE,
RANK, LOCAL_RANK, LOCAL_WORLD_SIZE. On several nodes, run it on each with the same --nnodes,
--master_addr and --master_port and its own --node_rank. When a process fails, the others are
stopped and the launcher exits with its code."""
import argparse
import os
import signal
import subprocess
import sys
import time


def parse_args(argv=None):
    p = argparse.ArgumentParser(prog="python -m oneflow.distributed.launch", description=__doc__.split("\n\n")[0])
    p.add_argument("--nnodes", type=int, default=1, help="number of nodes")
    p.add_argument("--node_rank", "--node-rank", type=int, default=0, help="rank of this node")
    p.add_argument("--nproc_per_node", "--nproc-per-node", type=int, default=1, help="processes on this node")
    p.add_argument("--master_addr", "--master-addr", default="127.0.0.1", help="address of the node of rank 0")
    p.add_argument("--master_port", "--master-port", type=int, default=29500, help="a free port on that node")
    p.add_argument("--standalone", action="store_true",
                   help="one node on a free local port (torchrun's flag): ignores --master_addr / --master_port")
    p.add_argument("-m", "--module", action="store_true", help="run the script as a module (python -m)")
    p.add_argument("--no_python", "--no-python", action="store_true", help="run the script as a program")
    p.add_argument("--use_env", "--use-env", action="store_true",
                   help="(accepted for PyTorch's launcher; the local rank is always in LOCAL_RANK)")
    p.add_argument("--logdir", default=None, help="write each process's output to LOGDIR/rank_<i>.log")
    p.add_argument("training_script", help="the script (or module) to run")
    p.add_argument("training_script_args", nargs=argparse.REMAINDER)
    args = p.parse_args(argv)
    if args.standalone:
        import socket
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            args.master_addr, args.master_port, args.nnodes, args.node_rank = "127.0.0.1", s.getsockname()[1], 1, 0
    if args.nnodes < 1 or args.nproc_per_node < 1 or not 0 <= args.node_rank < args.nnodes:
        p.error(f"need nnodes >= 1, nproc_per_node >= 1 and 0 <= node_rank < nnodes "
                f"(got {args.nnodes}, {args.nproc_per_node}, {args.node_rank})")
    return args


def _command(args):
    if args.no_python:
        return [args.training_script] + args.training_script_args
    head = [sys.executable, "-u"] + (["-m"] if args.module else [])
    return head + [args.training_script] + args.training_script_args


def main(argv=None):
    args = parse_args(argv)
    world = args.nnodes * args.nproc_per_node
    procs, logs = [], []
    for local in range(args.nproc_per_node):
        rank = args.node_rank * args.nproc_per_node + local
        env = dict(os.environ, MASTER_ADDR=args.master_addr, MASTER_PORT=str(args.master_port),
                   WORLD_SIZE=str(world), RANK=str(rank), LOCAL_RANK=str(local),
                   LOCAL_WORLD_SIZE=str(args.nproc_per_node), GROUP_RANK=str(args.node_rank))
        out = None
        if args.logdir:
            os.makedirs(args.logdir, exist_ok=True)
            out = open(os.path.join(args.logdir, f"rank_{rank}.log"), "w")
            logs.append(out)
        procs.append(subprocess.Popen(_command(args), env=env, stdout=out, stderr=subprocess.STDOUT if out else None))
    code = 0
    try:
        alive = list(procs)
        while alive:
            for p in list(alive):
                rc = p.poll()
                if rc is None:
                    continue
                alive.remove(p)
                if rc != 0 and code == 0:
                    code = rc if rc > 0 else 128 - rc
                    print(f"oneflow.distributed.launch: process {procs.index(p)} (pid {p.pid}) exited with code {rc}; "
                          "stopping the others", file=sys.stderr)
                    for q in alive:
                        q.send_signal(signal.SIGTERM)
            time.sleep(0.05)
    except KeyboardInterrupt:
        for p in procs:
            p.send_signal(signal.SIGINT)
        for p in procs:
            p.wait()
        code = 130
    finally:
        for f in logs:
            f.close()
    return code


if __name__ == "__main__":
    sys.exit(main())
