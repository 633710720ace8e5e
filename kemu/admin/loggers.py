"""The BROKER_LOGGER config resource (KIP-412): the broker's log levels, read and changed at runtime.

Kafka lists its log4j loggers with their effective levels and lets IncrementalAlterConfigs set or unset
them (never persisted). kemu's loggers are Python's: `root` and the `kemu` hierarchy, with Python's levels
shown under log4j's names (WARNING is WARN, CRITICAL is FATAL, and TRACE is a level below DEBUG).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from kemu.broker.broker_configs import parse_java_int

ROOT_LOGGER = "root"
TRACE = 5
_LEVELS = {"TRACE": TRACE, "DEBUG": logging.DEBUG, "INFO": logging.INFO, "WARN": logging.WARNING,
           "ERROR": logging.ERROR, "FATAL": logging.CRITICAL}
VALID_LOG_LEVELS = ", ".join(sorted(_LEVELS))

SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3
_OP_NAMES = {APPEND: "APPEND", SUBTRACT: "SUBTRACT"}


class LoggerChangeRefused(Exception):
    """Kafka's refusal of a log-level change: `code_name` is INVALID_CONFIG or INVALID_REQUEST."""

    def __init__(self, code_name: str, message: str) -> None:
        super().__init__(message)
        self.code_name = code_name
        self.message = message


def _level_name(level: int) -> str:
    name = "TRACE"
    for candidate, value in sorted(_LEVELS.items(), key=lambda item: item[1]):
        if level >= value:
            name = candidate
    return name


def _kemu_loggers() -> list[str]:
    return sorted(name for name, found in logging.root.manager.loggerDict.items()
                  if isinstance(found, logging.Logger) and (name == "kemu" or name.startswith("kemu.")))


def loggers() -> dict[str, str]:
    """Every logger with its effective level, by name (Kafka's LoggingController.loggers)."""
    found = {name: _level_name(logging.getLogger(name).getEffectiveLevel()) for name in _kemu_loggers()}
    found[ROOT_LOGGER] = _level_name(logging.root.level)
    return dict(sorted(found.items()))


def _exists(name: str) -> bool:
    return name == ROOT_LOGGER or name in _kemu_loggers()


def _logger(name: str) -> logging.Logger:
    return logging.root if name == ROOT_LOGGER else logging.getLogger(name)


def check_node(resource_name: str, node_id: int) -> None:
    """RuntimeLoggerManager.validateResourceNameIsNodeId, with its messages (the second names this node's id
    twice, as Kafka's does)."""
    requested = parse_java_int(resource_name)
    if requested is None:
        raise LoggerChangeRefused("INVALID_REQUEST", f"Node id must be an integer, but it is: {resource_name}")
    if requested != node_id:
        raise LoggerChangeRefused("INVALID_REQUEST", f"Unexpected node id. Expected {node_id}, but received {node_id}")


def change(node_id: int, resource_name: str, configs: Sequence[tuple[str, int, str | None]],
           validate_only: bool) -> None:
    """Check every (logger, operation, level) first, then apply them unless `validate_only`."""
    check_node(resource_name, node_id)
    for name, op, level in configs:
        if op == SET:
            if not _exists(name):
                raise LoggerChangeRefused("INVALID_CONFIG", f"Logger {name} does not exist!")
            if level not in _LEVELS:
                raise LoggerChangeRefused("INVALID_CONFIG", f"Cannot set the log level of {name} to {level} as it "
                                                            f"is not a supported log level. Valid log levels are "
                                                            f"{VALID_LOG_LEVELS}")
        elif op == DELETE:
            if not _exists(name):
                raise LoggerChangeRefused("INVALID_CONFIG", f"Logger {name} does not exist!")
            if name == ROOT_LOGGER:
                raise LoggerChangeRefused("INVALID_REQUEST",
                                          f"Removing the log level of the {ROOT_LOGGER} logger is not allowed")
        elif op in _OP_NAMES:
            raise LoggerChangeRefused("INVALID_REQUEST",
                                      f"{_OP_NAMES[op]} operation is not allowed for the BROKER_LOGGER resource")
        else:
            raise LoggerChangeRefused("INVALID_REQUEST", f"Unknown operation type {op} is not allowed for the "
                                                         "BROKER_LOGGER resource")
    if validate_only:
        return
    for name, op, level in configs:
        _logger(name).setLevel(_LEVELS[level] if op == SET and level is not None else logging.NOTSET)
