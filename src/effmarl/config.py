"""Configuration: one JSON schema (workflow/schemas/config.schema.yaml) for workflow profiles and runs.

Validation fills the schema's defaults in place, so the schema is the one place defaults live, and
reports every problem as one line naming the field and what is allowed, before any compute starts.
Stricter than plain JSON Schema where plain is wrong for us: `number` is a finite number (JSON Schema's
bounds are false for NaN, so NaN would pass any bound), `integer` is an int (3.0 is not), a boolean is
neither, and a YAML mapping with a repeated key is an error (YAML would keep the last one silently).
A run's cross-field checks (one algorithm's fields against another's) run inside `validate`, so
`effmarl validate`, the workflow's profile expansion and `effmarl train` accept exactly the same runs.
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import importlib
import json
import math
from collections.abc import Iterator, Mapping
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from effmarl.methods import METHODS
from effmarl.scenarios import SCENARIOS
from effmarl.variants import QMIX_VARIANTS


class ConfigError(ValueError):
    """A configuration that does not satisfy the schema; `lines` holds one message per problem."""

    def __init__(self, lines: list[str], source: str = "config"):
        self.lines = lines
        self.source = source
        super().__init__("\n".join(f"{source}: {line}" for line in lines))


class Section(Mapping):
    """Base of a frozen dataclass holding one validated config section, one field per option (settings objects:
    algos/qmix/settings.py, algos/offpolicy_settings.py). Also a read-only mapping of the same names, so
    `options["lr"]` and `{**options}` read as the section did."""

    @classmethod
    def of(cls, section: Mapping):
        """`section` as this class: an instance as it is, else a validated section (every option present)."""
        if isinstance(section, cls):
            return section
        return cls(**{f.name: section[f.name] for f in dataclasses.fields(cls)})

    def replace(self, **changes: Any):
        return dataclasses.replace(self, **changes)

    def __getitem__(self, key: str) -> Any:
        if key not in self.__dataclass_fields__:
            raise KeyError(key)
        return getattr(self, key)

    def __iter__(self) -> Iterator[str]:
        return iter(self.__dataclass_fields__)

    def __len__(self) -> int:
        return len(self.__dataclass_fields__)


def schema() -> dict:
    """The config schema, with the records' names in its enums: the QMIX family's variants (effmarl/variants.py) in
    `algo`, the sparse-training methods (effmarl/methods.py) in `sparse.method`, paper 1's scenarios and their teams
    (effmarl/scenarios.py) in `env.scenario` and `offpolicy.train_teams`."""
    return _schema(tuple(QMIX_VARIANTS), tuple(METHODS), tuple(SCENARIOS))


@cache
def _schema(variants: tuple[str, ...], methods: tuple[str, ...], scenarios: tuple[str, ...]) -> dict:
    text = resources.files("effmarl").joinpath("schemas/config.schema.yaml").read_text()
    full = yaml.safe_load(text)
    defs = full["$defs"]
    run = defs["run"]
    run["properties"]["algo"]["enum"] += list(variants)
    family = [c for c in run["allOf"] if c.get("if", {}).get("properties", {}).get("algo", {}).get("enum") == []]
    assert len(family) == 1, "the schema's qmix-family condition (algo enum [], filled here) is missing"
    family[0]["if"]["properties"]["algo"]["enum"] = list(variants)
    teams = list(dict.fromkeys(team for name in scenarios for team in SCENARIOS[name].teams.values()))
    train_teams = defs["offpolicy"]["properties"]["train_teams"]
    for enum, names in ((defs["sparse"]["properties"]["method"], methods),
                        (defs["env_mpe"]["properties"]["scenario"], scenarios), (train_teams["items"], teams)):
        assert enum["enum"] == [], "the schema's enums that the records fill are written [] in the file"
        enum["enum"] = list(names)
    train_teams["default"] = teams  # every team trains unless the run names some
    (pruned,) = defs["sparse"]["allOf"]  # the methods that prune a dense start get its schedule's start
    pruned["if"]["properties"]["method"]["enum"] = [name for name in methods if METHODS[name].prune is not None]
    return full


def _is_integer(checker, instance) -> bool:
    return isinstance(instance, int) and not isinstance(instance, bool)


def _is_number(checker, instance) -> bool:
    if isinstance(instance, bool):
        return False
    return isinstance(instance, int) or (isinstance(instance, float) and math.isfinite(instance))


TYPE_CHECKER = jsonschema.Draft202012Validator.TYPE_CHECKER.redefine_many(
    {"integer": _is_integer, "number": _is_number})


@cache
def _validator_with_defaults():
    """A Draft 2020-12 validator that also writes each property's `default` into the instance."""
    base = jsonschema.validators.extend(jsonschema.Draft202012Validator, type_checker=TYPE_CHECKER)
    validate_properties = base.VALIDATORS["properties"]

    def set_defaults(validator, properties, instance, subschema):
        if isinstance(instance, dict):
            # A section's default sits beside its $ref (`budget: {$ref: ..., default: {}}`): only the
            # property schemas seen here are read, so a $defs entry can be filled per algorithm (allOf/if).
            for name, prop in properties.items():
                if "default" in prop and name not in instance:
                    instance[name] = copy.deepcopy(prop["default"])
        yield from validate_properties(validator, properties, instance, subschema)

    return jsonschema.validators.extend(base, {"properties": set_defaults})


def _field(path) -> str:
    return ".".join(str(p) for p in path) or "(top level)"


# field -> the message for a config that still sets an option that now lives at another address
MOVED = {
    "qmix.return_kind": "field 'qmix.return_kind': removed; a run's return comes from its components: λ-returns at "
                        "mast.td_lambda (enabled, lambda, burn_in_fraction), n-step returns at rlx2.multi_step "
                        "(enabled, n, delay_fraction), otherwise one-step",
    "qmix.td_lambda": "field 'qmix.td_lambda': removed; λ-returns are set at mast.td_lambda (enabled, lambda, "
                      "burn_in_fraction; burn_in_fraction 0 = from the first update)",
    "qmix.n_step": "field 'qmix.n_step': removed; n-step returns are set at rlx2.multi_step (enabled, n, "
                   "delay_fraction; delay_fraction 0 = from the first update)",
}


def _describe(error: jsonschema.ValidationError) -> str:
    if error.validator in ("anyOf", "oneOf") and error.context:  # the alternative of the value's own type
        matched = [e for e in error.context if e.validator != "type"] or list(error.context)
        return _describe(jsonschema.exceptions.best_match(matched))
    kind, subschema = error.validator, error.schema
    if kind == "additionalProperties" and isinstance(error.instance, dict):
        allowed = sorted(subschema.get("properties", {}))
        extra = sorted(set(error.instance) - set(allowed), key=repr)
        where = _field(error.absolute_path)
        moved = [MOVED[f"{where}.{key}"] for key in extra if f"{where}.{key}" in MOVED]
        if moved:
            return "; ".join(moved)
        return f"field '{where}': unknown key(s) {', '.join(map(repr, extra))}; allowed keys: {', '.join(allowed)}"
    if kind == "required":
        missing = error.message.split("'")[1] if "'" in error.message else error.message
        return f"field '{_field([*error.absolute_path, missing])}': required but missing"
    if kind == "enum":
        return (
            f"field '{_field(error.absolute_path)}': {error.instance!r} is not allowed; "
            f"allowed values: {', '.join(map(repr, subschema['enum']))}"
        )
    if kind == "const":
        return f"field '{_field(error.absolute_path)}': must be {subschema['const']!r}, got {error.instance!r}"
    if kind == "type":
        wanted = subschema["type"] if isinstance(subschema["type"], list) else [subschema["type"]]
        words = {"number": "a finite number", "integer": "an integer"}
        got = error.instance
        got = f"{got!r} ({type(got).__name__})" if not isinstance(got, dict | list) else type(got).__name__
        return f"field '{_field(error.absolute_path)}': must be {' or '.join(words.get(w, w) for w in wanted)}, " \
               f"got {got}"
    if kind in ("maximum", "exclusiveMaximum"):
        return f"field '{_field(error.absolute_path)}': {error.instance!r} is above the upper bound " \
               f"{subschema[kind]} ({'inclusive' if kind == 'maximum' else 'exclusive'})"
    return f"field '{_field(error.absolute_path)}': {error.message}"


def validate(instance: dict, *, part: str = "workflow", source: str = "config", checks: bool = True) -> dict:
    """Validate `instance` (filling defaults in place) against the whole schema or one of its $defs.

    part: "workflow" for a profile (configs/<profile>.yaml, its studies resolved: effmarl.studies.load_profile),
    or a $defs name such as "run". checks: run a run's cross-field checks too (once per run: false only for a
    config that is validated again, e.g. before `effmarl train --set` overrides).
    """
    full = schema()
    target = full if part == "workflow" else {"$ref": f"#/$defs/{part}", "$defs": full["$defs"]}
    if not isinstance(instance, dict):
        raise ConfigError([f"the {part} configuration must be a mapping, got {type(instance).__name__}"], source)
    validator = _validator_with_defaults()(target)
    errors = sorted(validator.iter_errors(instance), key=lambda e: (list(map(str, e.absolute_path)), e.message))
    lines = list(dict.fromkeys(_describe(e) for e in errors))
    if lines:
        raise ConfigError(lines, source)
    if part == "run" and checks:
        cross_checks(instance, source)
    return instance


# algo -> "module:function" of its cross-field checks (imported only when such a run is validated)
CROSS_CHECKS = {
    "maddpg": "effmarl.config:offpolicy_checks",
    "masac": "effmarl.config:offpolicy_checks",
}  # + each QMIX-family variant's `checks` (effmarl/variants.py)


def env_checks(cfg: dict) -> None:
    """`env.backend` mpe_vec only for a scenario it implements (its entry's `array_backend`, effmarl/scenarios.py).
    `env.num_envs` (E copies in lockstep, on the backends whose schema has it): an episode-budgeted run plays
    its episodes E at a time, so the budget is a multiple of E; the qmix family sets copies in its own section."""
    if cfg["env"]["backend"] == "mpe_vec" and not SCENARIOS[cfg["env"]["scenario"]].array_backend:
        raise ConfigError([f"field 'env.backend': scenario {cfg['env']['scenario']!r} has no array backend (mpe_vec); "
                           "use mpe"], f"run {cfg['study']}")
    copies = cfg["env"].get("num_envs", 1)
    if copies == 1:
        return
    if cfg["algo"] in QMIX_VARIANTS:
        raise ConfigError([f"field 'env.num_envs': {copies} copies; the qmix family sets its copies with "
                           f"qmix.num_envs, leave env.num_envs at 1"], f"run {cfg['study']}")
    if cfg["budget"]["episodes"] % copies:
        raise ConfigError([f"field 'budget.episodes': {cfg['budget']['episodes']} is not a multiple of "
                           f"env.num_envs {copies} (the copies play their episodes in lockstep)"],
                          f"run {cfg['study']}")


def cross_checks(cfg: dict, source: str = "config") -> None:
    """The checks the schema cannot express, for a schema-valid run; ConfigError lines name the fields."""
    try:
        env_checks(cfg)
    except ConfigError as exc:
        raise ConfigError(exc.lines, source) from None
    target = CROSS_CHECKS.get(cfg["algo"]) or getattr(QMIX_VARIANTS.get(cfg["algo"]), "checks", None)
    if target is None:
        return
    module, func = target.split(":")
    try:
        getattr(importlib.import_module(module), func)(cfg)
    except ConfigError as exc:
        raise ConfigError(exc.lines, source) from None


def offpolicy_checks(cfg: dict) -> None:
    """Cross-field checks of paper 1's off-policy loop (MADDPG, MASAC)."""
    off, replay, lines = cfg["offpolicy"], cfg["replay"], []
    if off["batch_size"] > replay["buffer_size"]:
        lines.append(f"field 'offpolicy.batch_size': {off['batch_size']} exceeds replay.buffer_size "
                     f"{replay['buffer_size']}")
    if off["warmup"] > replay["buffer_size"]:
        lines.append(f"field 'offpolicy.warmup': {off['warmup']} exceeds replay.buffer_size "
                     f"{replay['buffer_size']}, so no update would ever run")
    if cfg["env"].get("num_envs", 1) > replay["buffer_size"]:
        lines.append(f"field 'env.num_envs': {cfg['env']['num_envs']} copies store more transitions per step "
                     f"than replay.buffer_size {replay['buffer_size']}")
    if replay["sampler"] == "neighbor" and replay["neighbor_k"] > off["batch_size"]:
        lines.append(f"field 'replay.neighbor_k': {replay['neighbor_k']} exceeds offpolicy.batch_size "
                     f"{off['batch_size']}")
    if lines:
        raise ConfigError(lines, f"run {cfg['study']}")


class _UniqueKeyLoader(yaml.SafeLoader):
    """SafeLoader that refuses a mapping with a repeated key. YAML merge keys (`<<: *anchor`) are allowed: the
    mapping's own keys override the merged ones, and only its own keys must be unique."""

    def construct_mapping(self, node, deep=False):
        seen = set()
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = self.construct_object(key_node, deep=True)
            try:
                duplicate = key in seen
            except TypeError:  # an unhashable key: the base class reports it
                break
            if duplicate:
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {key!r} (YAML would keep only the last one)", key_node.start_mark)
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


def parse_yaml(text: str, source: str) -> Any:
    try:
        return yaml.load(text, Loader=_UniqueKeyLoader)  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as exc:
        raise ConfigError([f"not valid YAML: {' '.join(str(exc).split())}"], source) from None


def load_yaml(path: str | Path) -> Any:
    path = Path(path)
    try:
        text = path.read_text()
    except FileNotFoundError:
        raise ConfigError(["no such file"], str(path)) from None
    except IsADirectoryError:
        raise ConfigError(["is a directory, not a YAML file"], str(path)) from None
    except UnicodeDecodeError:
        raise ConfigError(["not a text file (not UTF-8), so not YAML"], str(path)) from None
    except OSError as exc:
        raise ConfigError([f"cannot read: {exc.strerror or exc}"], str(path)) from None
    return parse_yaml(text, str(path))


def load_run_config(path: str | Path, checks: bool = True) -> dict:
    """Read and validate one run's configuration file (`checks`: see validate)."""
    return validate(load_yaml(path), part="run", source=str(path), checks=checks)


def config_hash(cfg: dict) -> str:
    """A short, stable hash of a configuration (key order does not matter)."""
    canonical = json.dumps(cfg, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()[:12]


def set_dotted(cfg: dict, dotted: str, value: Any) -> None:
    *parents, leaf = dotted.split(".")
    node = cfg
    for key in parents:
        node = node.setdefault(key, {})
        if not isinstance(node, dict):
            raise ConfigError([f"field '{dotted}': '{key}' is not a mapping"])
    node[leaf] = copy.deepcopy(value)


def get_dotted(cfg: dict, dotted: str) -> Any:
    """The value at a dotted path of a config, or None where a part of the path is missing."""
    node: Any = cfg
    for key in dotted.split("."):
        if not isinstance(node, dict) or key not in node:
            return None
        node = node[key]
    return node
