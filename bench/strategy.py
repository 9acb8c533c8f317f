#!/usr/bin/env python3
"""Writes a transform script for the simulator benchmarks.

usage: strategy.py SCHEDULE RANKS MICROBATCHES [options] > strategy.mlir

Stages are the model's PP chunks: RANKS for gpipe/1f1b/zb-h1, 2*RANKS for
zb-v/dualpipev (V order), RANKS*V for interleaved-1f1b. The DAG is expected
built with separate BI and BW nodes (the default), so a stage hands its
input gradient upstream before its weight gradient. With --fused the DAG
is expected from --piper-build-dag=fuse-backward and only the (stage,
microbatch) pairs the schedule runs as separate I and W are split back
(split_backward), so the other backwards stay atomic, as schedules.md's
closed forms assume. Fused B nodes hide the EP tags of their bodies from
replicate's `where`, so --fused does not combine with --ep. Each stage
boundary and direction gets its own transfer stream (pp_f<s>, pp_b<s>), so
boundaries do not serialise each other's messages.

options:
  --chunks V          stages per rank for interleaved-1f1b
  --consecutive K     K consecutive stages per rank for gpipe/1f1b/zb-h1
                      (stage s on rank s / K, run as one stage: a node per
                      chunk, e.g. per layer, so ZeRO-3 gathers per chunk)
  --fused             see above
  --ep AXIS           shard experts over AXIS and replicate dense weights over
                      it (and --dp)
  --dp AXIS           replicate every weight over AXIS (data parallel)
  --zero N            ZeRO stage of the replication (default 1)
  --comm-stream S     put every EP/DP collective on stream S instead of the
                      default per-kind streams (serialises them)
"""
import argparse
import re
import subprocess
import sys

ap = argparse.ArgumentParser()
ap.add_argument('schedule')
ap.add_argument('ranks', type=int)
ap.add_argument('microbatches', type=int)
ap.add_argument('--chunks', type=int, default=1)
ap.add_argument('--consecutive', type=int, default=1)
ap.add_argument('--fused', action='store_true')
ap.add_argument('--ep')
ap.add_argument('--dp')
ap.add_argument('--zero', type=int, default=1)
ap.add_argument('--comm-stream')
ap.add_argument('--piper-schedule', default='build/bin/piper-schedule')
args = ap.parse_args()

p, m, v, name = args.ranks, args.microbatches, args.chunks, args.schedule
if args.consecutive > 1 and (args.fused or name not in ('gpipe', '1f1b',
                                                        'zb-h1')):
    sys.exit('strategy.py: --consecutive takes gpipe, 1f1b or zb-h1, '
             'without --fused')
if name in ('zb-v', 'dualpipev'):
    stages, rank = 2 * p, (lambda s: s if s < p else 2 * p - 1 - s)
elif name == 'interleaved-1f1b':
    stages, rank = p * v, (lambda s: s % p)
else:
    k = args.consecutive
    stages, rank = p * k, (lambda s: s // k)

# The (stage, microbatch) pairs the schedule splits into I and W.
cmd = [args.piper_schedule, f'--schedule={name}', f'--pp={p}',
       f'--microbatches={m}', '--format=csv'] + \
      ([f'--chunks={v}'] if name == 'interleaved-1f1b' else [])
csv = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
split = sorted({(int(s), int(mb)) for s, _, mb in
                re.findall(r'(\d+)([IW])(\d+)', csv)})

any_ = '(!transform.any_op) -> !transform.any_op'
out = ['module attributes {transform.with_named_sequence} {',
       '  transform.named_sequence @__transform_main(%root: '
       '!transform.any_op {transform.readonly}) {',
       f'    %all = transform.piper.match_nodes {{}} in %root : {any_}',
       f'    %mb = transform.piper.split %all into {m} microbatches : {any_}']
for i, (s, mb) in enumerate(split if args.fused else []):
    out.append(f'    %b{i} = transform.piper.match_nodes {{PP = {s}, MB = {mb}, '
               f'PASS = "B"}} in %root : {any_}')
    out.append(f'    %sb{i} = transform.piper.split_backward %b{i} : {any_}')
for pas, d in (('F', 'f'), ('B', 'b'), ('UPD', 'b')):
    for s in range(stages):
        out.append(f'    %{pas}{s} = transform.piper.match_nodes {{PP = {s}, '
                   f'PASS = "{pas}"}} in %root : {any_}')
        out.append(f'    %x{pas}{s} = transform.piper.place %{pas}{s} on @mesh '
                   f'{{pp = {rank(s)}}} stream "pp_{d}{s}" : {any_}')
out.append(f'    %nodes = transform.piper.match_nodes {{}} in %root : {any_}')
stream = lambda default: f' stream "{args.comm_stream or default}"'
if args.ep:
    out.append(f'    %ep = transform.piper.shard %nodes expert over @mesh '
               f'["{args.ep}"]{stream(args.ep)} : {any_}')
    dense = [a for a in (args.dp, args.ep) if a]
    axes = ', '.join(f'"{a}"' for a in dense)
    out.append(f'    %dense = transform.piper.replicate %nodes over @mesh '
               f'[{axes}] zero = {args.zero} where {{EP = "none"}} : {any_}')
    handles = ['%dense']
    if args.dp:
        out.append(f'    %experts = transform.piper.replicate %nodes over @mesh '
                   f'["{args.dp}"] zero = {args.zero} where {{EP = "*"}} : {any_}')
        handles.append('%experts')
elif args.dp:
    out.append(f'    %dense = transform.piper.replicate %nodes over @mesh '
               f'["{args.dp}"] zero = {args.zero} : {any_}')
    handles = ['%dense']
else:
    handles = []
if args.comm_stream:
    for h in handles:
        out.append(f'    transform.piper.set_stream {h} "{args.comm_stream}" : '
                   '!transform.any_op')
out.append(f'    transform.piper.schedule "{name}" in %root : !transform.any_op')
out += ['    transform.yield', '  }', '}']
print('\n'.join(out))
