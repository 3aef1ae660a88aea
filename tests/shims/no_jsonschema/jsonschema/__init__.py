"""First on PYTHONPATH, this folder stands for a node without the jsonschema package (a GPU node
with no package index): `import jsonschema` fails as it does there. Used by
tests/report/test_without_jsonschema.py and the CTest tests results_schema_builtin and report_tool."""

raise ModuleNotFoundError("No module named 'jsonschema' (hidden by tests/shims/no_jsonschema)", name="jsonschema")
