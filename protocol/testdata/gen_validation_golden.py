"""Regenerates validation_golden.jsonl: the error bodies vLLM returns for
/tokenize and /detokenize bodies, computed with pydantic (2.x) from models
declared like vLLM's (vllm/entrypoints/serve/tokenize/protocol.py) and the
message rules of vLLM's validation exception handler and FastAPI's body
handling. Run: python3 gen_validation_golden.py > validation_golden.jsonl
Needs only pydantic; FastAPI is emulated (loc prefix "body", empty or null
body = missing, json.loads errors = json_invalid)."""
import json, re, sys
from typing import Annotated, Any, Union
from pydantic import BaseModel, ConfigDict, Field, model_validator, TypeAdapter, ValidationError

class VLLMValidationError(ValueError):
    def __init__(self, message, *, parameter=None, value=None):
        super().__init__(message); self.parameter = parameter; self.value = value
    def __str__(self):
        base = super().__str__(); extras = []
        if self.parameter is not None: extras.append(f"parameter={self.parameter}")
        if self.value is not None: extras.append(f"value={self.value}")
        return f"{base} ({', '.join(extras)})" if extras else base

class OpenAIBaseModel(BaseModel):
    model_config = ConfigDict(extra="allow")
    @model_validator(mode="wrap")
    @classmethod
    def __log_extra_fields__(cls, data, handler):
        return handler(data)

class TokenizeCompletionRequest(OpenAIBaseModel):
    model: str | None = None
    prompt: str
    add_special_tokens: bool = True
    return_token_strs: bool | None = False

class TokenizeChatRequest(OpenAIBaseModel):
    model: str | None = None
    messages: list[dict[str, Any]]
    add_generation_prompt: bool = True
    return_token_strs: bool | None = False
    continue_final_message: bool = False
    add_special_tokens: bool = False
    chat_template: str | None = None
    chat_template_kwargs: dict[str, Any] | None = None
    media_io_kwargs: dict[str, dict[str, Any]] | None = None
    mm_processor_kwargs: dict[str, Any] | None = None
    tools: list[dict[str, Any]] | None = None
    @model_validator(mode="before")
    @classmethod
    def check_generation_prompt(cls, data):
        if not isinstance(data, dict): return data
        if data.get("continue_final_message") and data.get("add_generation_prompt"):
            raise VLLMValidationError("Cannot set both `continue_final_message` and `add_generation_prompt` to True.")
        return data

class DetokenizeRequest(OpenAIBaseModel):
    model: str | None = None
    tokens: list[Annotated[int, Field(ge=0, le=2**63 - 1)]]

_BR = re.compile(r"[\[\]{}()]")
_MARK = {"function-wrap","function-after","function-before","function-plain","json-or-python","lax-or-strict","chain","default","nullable","tagged-union","union","call","arguments","is-instance","is-subclass","callable","str","int","float","bool","bytes","bytearray","list","tuple","dict","set","frozenset","complex","none","nonetype"}
def internal(seg): return bool(_BR.search(seg)) or seg.lower() in _MARK
def clean(loc):
    parts=[str(p) for p in loc if not internal(str(p))]
    return ".".join(parts) if parts else ".".join(str(p) for p in loc)
def summ(v):
    if isinstance(v,str): return v[:200]+"...[truncated]" if len(v)>200 else v
    if isinstance(v,(list,tuple,set,frozenset,dict)): return f"<{type(v).__name__} of {len(v)} items>"
    t=str(v); return t[:200]+"...[truncated]" if len(t)>200 else t
def fmt(err):
    err=dict(err)
    if "input" in err: err["input"]=summ(err["input"])
    if isinstance(err.get("loc"),(tuple,list)): err["loc"]=clean(tuple(err["loc"]))
    t=str(err); return t[:1000]+"...[truncated]" if len(t)>1000 else t
def sanitize(m):
    m=re.sub(r" at 0x[0-9a-f]+>", ">", m)
    m=re.sub(r'\n?\s*File "[^"]+", line \d+, in \S+(\n\s+.*)?', "", m)
    m=re.sub(r"/(?:home|usr|opt|var|tmp|root|lib|mnt|srv)(?:/[\w.\-]+)+", "<path>", m)
    m=re.sub(r"(?:/[\w\-]+)+/[\w\-]+\.\w+", "<path>", m)
    return m.strip()
def handle(errors):
    param=None
    for e in errors:
        if "ctx" in e and "error" in e["ctx"] and isinstance(e["ctx"]["error"], VLLMValidationError):
            param=e["ctx"]["error"].parameter; break
    if param is None and errors:
        loc=errors[0].get("loc") if isinstance(errors[0],dict) else None
        if loc: param=clean(loc)
    if errors:
        n=len(errors); label="error" if n==1 else "errors"; rep=errors[:10]
        msg=f"{n} validation {label}:\n"+"".join(f"  {fmt(e)}\n" for e in rep)
        if n>len(rep): msg+=f"  ...and {n-len(rep)} more {label}\n"
        msg=msg.rstrip()
    else: msg="Validation error"
    return {"error":{"message":sanitize(msg),"type":"Bad Request","param":param,"code":400}}

ADAPTERS={"tokenize":TypeAdapter(Union[TokenizeCompletionRequest,TokenizeChatRequest]),"detokenize":TypeAdapter(DetokenizeRequest)}
def run(endpoint, body_text):
    # FastAPI: empty body or JSON null -> missing body; else json.loads then validate with loc prefix 'body'
    if body_text == "":
        errs=[{"type":"missing","loc":("body",),"msg":"Field required","input":None}]
        return handle(errs)
    try:
        body=json.loads(body_text.encode("utf-8"))  # Starlette hands json.loads the raw bytes
    except json.JSONDecodeError as e:
        errs=[{"type":"json_invalid","loc":("body",e.pos),"msg":"JSON decode error","input":{},"ctx":{"error":e.msg}}]
        return handle(errs)
    if body is None:
        return handle([{"type":"missing","loc":("body",),"msg":"Field required","input":None}])
    try:
        v=ADAPTERS[endpoint].validate_python(body)
    except ValidationError as e:
        errs=[{**x,"loc":("body",)+tuple(x["loc"])} for x in e.errors(include_url=False)]
        return handle(errs)
    return {"ok": type(v).__name__, "dump": v.model_dump()}


T="tokenize"; D="detokenize"
cases=[
 ("tok_ok_prompt",T,'{"prompt":"hi"}'),
 ("tok_ok_chat",T,'{"messages":[{"role":"user","content":"hi"}]}'),
 ("tok_ok_both",T,'{"prompt":"hi","messages":[{"role":"user","content":"hi"}]}'),
 ("tok_empty_obj",T,'{}'),
 ("tok_empty_body",T,''),
 ("tok_null_body",T,'null'),
 ("tok_array_body",T,'[1,2]'),
 ("tok_string_body",T,'"x"'),
 ("tok_prompt_int",T,'{"prompt":5}'),
 ("tok_prompt_null",T,'{"prompt":null}'),
 ("tok_bad_bool",T,'{"prompt":"a","add_special_tokens":"maybe"}'),
 ("tok_bool_null",T,'{"prompt":"a","add_special_tokens":null}'),
 ("tok_bool_list",T,'{"prompt":"a","add_special_tokens":[]}'),
 ("tok_bool_2",T,'{"prompt":"a","add_special_tokens":2}'),
 ("tok_bool_lax",T,'{"prompt":"a","add_special_tokens":"no","return_token_strs":1}'),
 ("tok_bool_float",T,'{"prompt":"a","add_special_tokens":0.0,"return_token_strs":1.0}'),
 ("tok_bool_float_bad",T,'{"prompt":"a","add_special_tokens":0.5}'),
 ("tok_rts_null",T,'{"prompt":"a","return_token_strs":null}'),
 ("tok_model_int",T,'{"prompt":"a","model":7}'),
 ("tok_both_flags",T,'{"messages":[],"continue_final_message":true,"add_generation_prompt":true}'),
 ("tok_both_flags_prompt",T,'{"prompt":"x","continue_final_message":true,"add_generation_prompt":"yes"}'),
 ("tok_cfm_only",T,'{"messages":[],"continue_final_message":true}'),
 ("tok_messages_str",T,'{"messages":"hi"}'),
 ("tok_messages_items",T,'{"messages":[1,{"role":"user"}]}'),
 ("tok_chat_bad_fields",T,'{"messages":[],"chat_template":3,"chat_template_kwargs":[],"tools":{},"media_io_kwargs":{"image":1},"mm_processor_kwargs":"x"}'),
 ("tok_long_prompt_int",T,'{"prompt":123456789012345678901234567890}'),
 ("tok_long_str_model",T,json.dumps({"prompt":"a","model":["x"*300]})),
 ("tok_quote_input",T,'{"prompt":"a","add_special_tokens":"it\'s \\"q\\""}'),
 ("tok_unicode_input",T,'{"prompt":"a","add_special_tokens":"h\\u00e9\\u0007\\n\\t\\u2028 \\ud83d\\ude00"}'),
 ("tok_path_input",T,'{"prompt":"a","add_special_tokens":"/home/user/x.txt"}'),
 ("tok_float_input",T,'{"prompt":1e20}'),
 ("tok_float_input2",T,'{"prompt":0.0001}'),
 ("tok_float_input3",T,'{"prompt":1.5e-7}'),
 ("tok_float_input4",T,'{"prompt":123.456}'),
 ("tok_float_input5",T,'{"prompt":1e16}'),
 ("tok_float_input6",T,'{"prompt":1.0}'),
 ("tok_bool_input",T,'{"prompt":true}'),
 ("tok_json_bad1",T,'{"prompt": }'),
 ("tok_json_bad2",T,'{"prompt":"a",}'),
 ("tok_json_bad3",T,'{"prompt":"a"} x'),
 ("tok_json_bad4",T,'{"prompt" "a"}'),
 ("tok_json_bad5",T,'{"prompt":"a" "b"}'),
 ("tok_json_bad6",T,'{"prompt":"a\\q"}'),
 ("tok_json_bad7",T,'{"prompt":"a\\u12"}'),
 ("tok_json_bad8",T,'{"prompt":"abc'),
 ("tok_json_bad9",T,'{"prompt":"a\tb"}'),
 ("tok_json_bad10",T,'[1,]'),
 ("tok_json_bad11",T,'{"é":"ü" x}'),
 ("tok_json_bad12",T,'{'),
 ("tok_json_bad13",T,'{"a":01}'),
 ("tok_json_bad14",T,'{"a":-}'),
 ("tok_json_bad15",T,'{"a":1e}'),
 ("tok_json_bad16",T,'{"a":"\\ud800\\u12x4"}'),
 ("tok_json_bad17",T,'{"a":tru}'),
 ("tok_json_bad18",T,'   '),
 ("detok_ok",D,'{"tokens":[1,2,3]}'),
 ("detok_ok_lax",D,'{"tokens":[1.0,"2",true," 3 ","4.00"]}'),
 ("detok_missing",D,'{}'),
 ("detok_empty_body",D,''),
 ("detok_array_body",D,'[1]'),
 ("detok_tokens_null",D,'{"tokens":null}'),
 ("detok_tokens_str",D,'{"tokens":"1,2"}'),
 ("detok_negative",D,'{"tokens":[1,-1]}'),
 ("detok_too_big",D,'{"tokens":[9223372036854775808]}'),
 ("detok_max",D,'{"tokens":[9223372036854775807]}'),
 ("detok_big_float",D,'{"tokens":[1e19]}'),
 ("detok_fraction",D,'{"tokens":[1.5]}'),
 ("detok_bad_str",D,'{"tokens":["a1"]}'),
 ("detok_str_neg",D,'{"tokens":["-5"]}'),
 ("detok_null_item",D,'{"tokens":[null,[],{}]}'),
 ("detok_many",D,json.dumps({"tokens":[-1]*12})),
 ("detok_model_null",D,'{"tokens":[],"model":null}'),
 ("detok_neg_zero",D,'{"tokens":[-0]}'),
]
cases += [
 ("tok_union_chat_wins",T,'{"prompt":"hi","messages":[],"add_generation_prompt":false}'),
 ("tok_union_tie",T,'{"prompt":"hi","messages":[],"model":"m","add_special_tokens":true}'),
 ("tok_union_null_counts",T,'{"prompt":"hi","messages":[],"tools":null}'),
 ("detok_neg_big_float",D,'{"tokens":[-1e19]}'),
 ("detok_float_max",D,'{"tokens":[9223372036854775807.0]}'),
 ("detok_neg_float",D,'{"tokens":[-1.0]}'),
 ("detok_inf",D,'{"tokens":[1e400]}'),
 ("detok_str_forms",D,'{"tokens":["1_000","+5","0007","\\u00a07","5.000","-0","+0.0"]}'),
 ("detok_str_bad_forms",D,'{"tokens":["1__0","_1","1_","5.","0x10","1e3","","١٢","1.0_0"]}'),
 ("tok_bool_str_forms",T,'{"prompt":"x","add_special_tokens":"TRUE","return_token_strs":"on"}'),
 ("tok_bool_str_space",T,'{"prompt":"x","add_special_tokens":" true"}'),
 ("tok_bool_str_float",T,'{"prompt":"x","add_special_tokens":"1.0"}'),
 ("tok_bool_exp",T,'{"prompt":"x","add_special_tokens":1e0,"return_token_strs":-0}'),
 ("tok_bom",T,'\ufeff{"prompt":"x"}'),
 ("tok_ws_body",T,'  '),
]

if __name__ == "__main__":
    for n, e, b in cases:
        print(json.dumps({"name": n, "endpoint": e, "body": b, "result": run(e, b)}, ensure_ascii=False))
