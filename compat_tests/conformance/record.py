"""Recording the corpus: every script of compat_tests/conformance/scripts run against Kafka, its answers
normalised and written with the requests (corpus.py). Only Kafka's answers are ever written."""

from __future__ import annotations

from contextlib import ExitStack
from pathlib import Path

from compat_tests import jars
from compat_tests.conformance import corpus
from compat_tests.conformance.brokers import AuthorizerKafka, TokensKafka
from compat_tests.conformance.scripts import all_scripts
from compat_tests.conformance.steps import Script, run_script
from compat_tests.reference.kafka import KAFKA_JAR_SET, ReferenceKafka, find_java

Address = tuple[str, int]


def _started(stack: ExitStack, kind: type[ReferenceKafka], nodes: int) -> Address:
    java = find_java()
    if java is None:
        raise SystemExit("recording starts the reference Kafka, which needs java on PATH (or pass --bootstrap)")
    kafka = stack.enter_context(kind(classpath=jars.classpath(KAFKA_JAR_SET), java=java, nodes=nodes))
    return kafka.sasl_addresses[0] if kafka.sasl is not None else kafka.addresses[0]


def record_scripts(scripts: list[Script], address: Address) -> None:
    for script in scripts:
        answers = corpus.normalised(script, run_script(script, address))
        for step, answer in zip(script.steps, answers, strict=True):
            step.response = answer


def record(bootstrap: Address | None = None, authorizer_bootstrap: Address | None = None,
           cluster_bootstrap: Address | None = None, tokens_bootstrap: Address | None = None, *,
           only: str | None = None,
           directory: Path = corpus.CORPUS_DIR) -> list[Path]:
    # In the order a replay takes them (corpus.load: by file, then as written), so that what one script leaves
    # on the broker is the same at recording and at replay.
    ordered = sorted(all_scripts(), key=lambda script: script.area)
    fresh = [script for script in ordered if only is None or script.name.startswith(only)]
    kept = {script.name: script for script in corpus.load(directory)} if only else {}
    for group, kind, nodes, given in (("default", ReferenceKafka, 1, bootstrap),
                                      ("authorizer", AuthorizerKafka, 1, authorizer_bootstrap),
                                      ("cluster", ReferenceKafka, 3, cluster_bootstrap),
                                      ("tokens", TokensKafka, 1, tokens_bootstrap)):
        members = [script for script in fresh if script.group == group]
        if members:
            with ExitStack() as stack:  # a Kafka this starts is stopped before the next group's starts
                record_scripts(members, given or _started(stack, kind, nodes))
    merged = {**kept, **{script.name: script for script in fresh}}
    order = [script.name for script in all_scripts()]
    return corpus.save([merged[name] for name in order if name in merged], directory)
