"""Runs sacreBLEU's own command line (its main()) once per case inside one Python process, so a
test can compare many command lines without a Python start each.

stdin: JSON {"cases": [{"argv": [...], "stdin": "...", "env": {...}}], "sentence": {...}?}.
stdout: JSON {"cases": [{"stdout": "...", "stderr": "...", "code": N}], "sentence": {...}}.
argv[1]: the sacreBLEU source checkout. Each case gets fresh file descriptors for stdin and stdout
(main() reopens both by descriptor) and its own stderr; NO_COLOR is set, which prints what
sacreBLEU prints into a pipe (colorama strips its colours there).
"""
import gc
import json
import os
import sys
import tempfile

sys.path.insert(0, sys.argv[1])
os.environ['NO_COLOR'] = '1'
from sacrebleu import sacrebleu as cli  # noqa: E402
import sacrebleu  # noqa: E402
sys.dont_write_bytecode = True  # no __pycache__ beside the helper below in the checkout
import sacrebleu_memo  # noqa: E402  (beside this file)


class Descriptor:
    """What main() needs of sys.stdin / sys.stdout before it reopens them: a descriptor."""

    def __init__(self, fd):
        self.fd = fd

    def fileno(self):
        return self.fd

    def flush(self):
        pass


def run(case):
    env_keys = ('SACREBLEU_FORMAT', 'SACREBLEU_SEED')
    saved_env = {k: os.environ.get(k) for k in env_keys}
    for k in env_keys:
        os.environ.pop(k, None)
    os.environ.update(case.get('env', {}))
    with tempfile.TemporaryFile() as fin, tempfile.TemporaryFile() as fout, tempfile.TemporaryFile() as ferr:
        fin.write(case.get('stdin', '').encode('utf-8'))
        fin.flush()
        fin.seek(0)
        sys.stdin = Descriptor(os.dup(fin.fileno()))
        sys.stdout = Descriptor(os.dup(fout.fileno()))
        sys.stderr.flush()
        saved_err = os.dup(2)
        os.dup2(ferr.fileno(), 2)
        sys.argv = ['sacrebleu', *case['argv']]
        code = 0
        try:
            cli.main()
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        except Exception as e:  # what Python would print as a traceback, exit 1
            sys.stderr.write(f'{type(e).__name__}: {e}\n')
            code = 1
        finally:
            for stream in (sys.stdout, sys.stdin):
                if isinstance(stream, Descriptor):
                    os.close(stream.fd)
                else:
                    if stream is sys.stdout:
                        stream.flush()
                    stream.close()
            sys.stdin, sys.stdout = sys.__stdin__, sys.__stdout__
            sys.stderr.flush()
            os.dup2(saved_err, 2)
            os.close(saved_err)
            for k, v in saved_env.items():
                os.environ.pop(k, None)
                if v is not None:
                    os.environ[k] = v
        fout.seek(0)
        ferr.seek(0)
        return {'stdout': fout.read().decode('utf-8'), 'stderr': ferr.read().decode('utf-8', 'replace'), 'code': code}


def sentences(req):
    """sacreBLEU's library sentence_bleu / sentence_chrf / sentence_ter for each (hyp, refs)."""
    out = {'bleu': [], 'chrf': [], 'ter': []}
    for hyp, refs in req['pairs']:
        out['bleu'].append(sacrebleu.sentence_bleu(hyp, refs).score)
        out['chrf'].append(sacrebleu.sentence_chrf(hyp, refs).score)
        out['ter'].append(sacrebleu.sentence_ter(hyp, refs).score)
    return out


def collected(work, *args):
    """work(*args) with Python's cyclic collector off (see below), then one full collection."""
    try:
        return work(*args)
    finally:
        sacrebleu_memo.collect()


# sacreBLEU allocates millions of small tuples and Counters (TER's beam search above all) that die
# young without forming cycles: the automatic cyclic collector scanning them cost 10-25% of the
# CPU time here (TER of 7,354 turns: 12.2 -> 9.8 CPU seconds, peak memory the same). It is off;
# one collection after each case bounds what a cycle could hold. Results are the same bits.
gc.disable()
# The cases ask sacreBLEU the same per-segment questions many times (the same references in every
# command line, six BLEU smoothings of one system, sentence_score rebuilding a segment's reference
# cache): sacreBLEU answers each once (sacrebleu_memo.py says why its numbers stay its own).
sacrebleu_memo.install()
request = json.load(sys.stdin)
result = {'cases': [collected(run, c) for c in request.get('cases', [])]}
if 'sentence' in request:
    result['sentence'] = collected(sentences, request['sentence'])
sys.__stdout__.write(json.dumps(result))
