#!/bin/sh
# Builds the import shim gen_openai_types.py and gen_responses_validation_golden.py
# run against: openai-python's src/openai/types at the named commit, with the
# three runtime helpers they import replaced (openai's BaseModel is pydantic's
# with extra="allow"; PropertyInfo is metadata pydantic ignores; SequenceNotStr
# is Sequence at runtime, as openai's _types.py defines it).
# Usage: openai_shim.sh <openai-python git dir> <commit> <out dir>
# then: PYTHONPATH=<out dir>/src python3 gen_openai_types.py > ../openai_types.json
set -eu
repo=$1 commit=$2 out=$3
mkdir -p "$out"
git --git-dir="$repo" archive "$commit" src/openai/types | tar -x -C "$out"
cd "$out/src/openai"
: > __init__.py
cat > _models.py <<'PY'
import pydantic
from pydantic import ConfigDict
class BaseModel(pydantic.BaseModel):
    model_config = ConfigDict(extra="allow")
class GenericModel(BaseModel):
    pass
PY
cat > _utils.py <<'PY'
class PropertyInfo:
    def __init__(self, **kw): self.kw = kw
PY
cat > _types.py <<'PY'
from typing import Any, Mapping, Sequence
SequenceNotStr = Sequence
FileTypes = Any
Query = Mapping[str, object]
Headers = Mapping[str, str]
PY
