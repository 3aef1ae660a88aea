"""jsonschema and the built-in validator (draft7_subset) give the same answer: the same verdict,
JSON path and message from the report's first_error, on every committed results file and on
broken documents (the seeded mutations below, and the malformed documents of test_schema.py);
and the same best error on the expectations files and their broken copies.
Also the schemas themselves against draft 7's meta-schema. Needs the jsonschema package: where it
is missing every test here is skipped, with the reason (CTest: results_schema_jsonschema)."""
import copy
import functools
import gzip
import json
import pathlib
import random
import sys

import pytest

pytest.importorskip("jsonschema", reason="needs the Python package jsonschema (pip install -r scripts/requirements.txt)")
import jsonschema  # noqa: E402
import jsonschema.exceptions  # noqa: E402

REPO = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "scripts"))
sys.path.insert(0, str(REPO / "tests" / "report"))
sys.path.insert(0, str(REPO / "tests" / "schema"))

from p2pbench_report import draft7_subset  # noqa: E402
from p2pbench_report.schema import BUILT_IN, JSONSCHEMA, first_error  # noqa: E402

SCHEMAS = sorted(REPO.glob("schema/*.schema.json"))
# What a broken field is set to: wrong types, numbers as text, out-of-range numbers, empties.
WRONG_VALUES = [None, "x", "390.1", -1, 0, 1.5, True, [], {}, [1], {"a": 1}, 10 ** 20, 2.0]
BROKEN_PER_DOCUMENT = 30  # mutations that the validators reject, compared per document
MUTATIONS_AT_MOST = 400  # many land in loosely specified parts (meta.health_*, meta.config)


def read(path: pathlib.Path):
    data = path.read_bytes()
    return json.loads(gzip.decompress(data) if path.suffix == ".gz" else data)


def committed_results():
    paths = sorted([*(REPO / "results").rglob("*.json"), *(REPO / "results").rglob("*.json.gz")])
    return [str(p.relative_to(REPO)) for p in paths
            if (lambda d: isinstance(d, dict) and isinstance(d.get("schema_version"), int) and "meta" in d)(read(p))]


def both(document):
    return first_error(document, JSONSCHEMA), first_error(document, BUILT_IN)


@pytest.mark.parametrize("path", SCHEMAS, ids=[p.name for p in SCHEMAS])
def test_the_schemas_meet_draft_7(path):
    jsonschema.Draft7Validator.check_schema(json.loads(path.read_text()))


@pytest.mark.parametrize("name", committed_results())
def test_same_verdict_on_every_committed_file(name):
    by_jsonschema, built_in = both(read(REPO / name))
    assert by_jsonschema == built_in, name
    assert by_jsonschema is None, f"{name}: {by_jsonschema}"


def places(node, path=()):
    """The paths of a document's values, the root left out."""
    if path:
        yield path
    children = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for key, value in children:
        yield from places(value, (*path, key))


def mutated(document, rng):
    """The document with one field deleted, an unknown key added beside it, or its value replaced."""
    broken = copy.deepcopy(document)
    path = rng.choice(list(places(broken)))
    parent = broken
    for key in path[:-1]:
        parent = parent[key]
    choice = rng.random()
    if choice < 0.25 and isinstance(parent, dict):
        del parent[path[-1]]
    elif choice < 0.35 and isinstance(parent, dict):
        parent["unexpected_key"] = 1
    else:
        parent[path[-1]] = rng.choice(WRONG_VALUES)
    return broken, path


def trimmed(node):
    """The document with every array cut to its first 3 items (jsonschema takes seconds on a whole
    file; mutations then land on the fields, not mostly on raw samples)."""
    if isinstance(node, dict):
        return {key: trimmed(value) for key, value in node.items()}
    if isinstance(node, list):
        return [trimmed(value) for value in node[:3]]
    return node


@functools.lru_cache(maxsize=1)  # read once for the parametrization and each test (mutated copies)
def documents():
    """A version 1 run, the writer's version 2 shapes (the synthetic group run) and a cross-node
    group run, trimmed."""
    import make_fixtures

    runs = {"v1 default": read(REPO / "results/h200-nv18/default.json"),
            "v2 synthetic group": make_fixtures.synthetic_group_results(),
            "v2 crossnode": read(REPO / "results/h200-nv18/groups/crossnode/results.json")}
    return {name: trimmed(doc) for name, doc in runs.items()}


def same_answers_on_mutations(name, document, answers):
    """Mutates `document` (seeded by `name`: the same mutations on every run) until
    BROKEN_PER_DOCUMENT copies are rejected, asserting that answers(copy), a (jsonschema, built-in)
    pair, agree on each; fails where too few mutations break it to compare."""
    rng = random.Random(name)
    rejected = 0
    for _ in range(MUTATIONS_AT_MOST):
        broken, path = mutated(document, rng)
        by_jsonschema, built_in = answers(broken)
        assert by_jsonschema == built_in, f"{name}, {path} changed"
        rejected += by_jsonschema is not None
        if rejected == BROKEN_PER_DOCUMENT:
            return
    pytest.fail(f"only {rejected} of {MUTATIONS_AT_MOST} mutations broke {name}: too few to compare")


@pytest.mark.parametrize("name", sorted(documents()))
def test_same_answer_on_broken_documents(name):
    same_answers_on_mutations(name, documents()[name], both)


def test_same_answer_on_the_malformed_documents_of_the_schema_tests():
    import test_schema

    broken = [test_schema.mutate(path, value, delete) for path, value, delete in test_schema.MALFORMED]
    for name, breakage in test_schema.GROUP_BREAKAGES.items():
        doc = test_schema.group_document()
        breakage(doc)
        broken.append(doc)
    for doc in broken:
        by_jsonschema, built_in = both(doc)
        assert by_jsonschema is not None and by_jsonschema == built_in


def expectations_answers(document):
    """(JSON path, message) of the best error, or None, from each validator of expectations.schema.json."""
    schema = json.loads((REPO / "schema" / "expectations.schema.json").read_text())
    answers = []
    for validator, best_match in ((jsonschema.Draft7Validator(schema), jsonschema.exceptions.best_match),
                                  (draft7_subset.Validator(schema), draft7_subset.best_match)):
        error = best_match(validator.iter_errors(document))
        answers.append(None if error is None else (list(error.absolute_path), error.message))
    return answers


@pytest.mark.parametrize("path", sorted((REPO / "expectations").glob("*.json")), ids=lambda p: p.name)
def test_same_answer_on_expectations_files_and_their_broken_copies(path):
    document = read(path)
    assert expectations_answers(document) == [None, None]
    same_answers_on_mutations(path.name, trimmed(document), expectations_answers)
