"""Regenerates render_validation_golden.jsonl: what vLLM answers for chat and
completion render bodies that fail validation, and how it reads some that
pass. The models below declare the fields, defaults and model validators of
vLLM's ChatCompletionRequest and CompletionRequest
(vllm/entrypoints/openai/{chat_completion,completion}/protocol.py at mlow/vllm
bf578e1) with two simplifications: messages are list[dict] (vrender checks
message contents in the render tier) and structural tags are checked for
shape only (vLLM also compiles them with xgrammar). Error bodies go through the same emulation of
vLLM's validation handler as gen_validation_golden.py.
Run: python3 gen_render_golden.py > render_validation_golden.jsonl"""
import json
import sys
from dataclasses import field
from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field, TypeAdapter, ValidationError, model_validator
from pydantic.dataclasses import dataclass

sys.path.insert(0, __file__.rsplit("/", 1)[0] if "/" in __file__ else ".")
from gen_validation_golden import OpenAIBaseModel, VLLMValidationError, handle  # noqa: E402

I64 = (-(2**63), 2**63 - 1)


def validate_thinking_token_budget(value):
    if value is None:
        return None
    if isinstance(value, (bool, float)) or not isinstance(value, int):
        raise VLLMValidationError("`thinking_token_budget` must be a non-negative integer or -1 for unlimited.",
                                  parameter="thinking_token_budget", value=value)
    if value == -1:
        return None
    if value < 0:
        raise VLLMValidationError("`thinking_token_budget` must be a non-negative integer or -1 for unlimited.",
                                  parameter="thinking_token_budget", value=value)
    return value


ThinkingTokenBudget = Annotated[int | None, BeforeValidator(validate_thinking_token_budget)]


@dataclass
class StructuredOutputsParams:
    json: str | dict | None = None
    regex: str | None = None
    choice: list[str] | None = None
    grammar: str | None = None
    json_object: bool | None = None
    disable_any_whitespace: bool = False
    disable_additional_properties: bool = False
    whitespace_pattern: str | None = None
    structural_tag: str | None = None
    _backend: str | None = field(default=None, init=False)
    _backend_was_auto: bool = field(default=False, init=False)

    def __post_init__(self):
        count = sum([self.json is not None, self.regex is not None, self.choice is not None,
                     self.grammar is not None, self.json_object is not None, self.structural_tag is not None])
        if count > 1:
            raise ValueError("You can only use one kind of structured outputs constraint "
                             f"but multiple are specified: {self.__dict__}")
        if count < 1:
            raise ValueError("You must use one kind of structured outputs constraint "
                             f"but none are specified: {self.__dict__}")


@dataclass
class RepetitionDetectionParams:
    max_pattern_size: int = 0
    min_pattern_size: int = 0
    min_count: int = 0

    def __post_init__(self):
        if self.max_pattern_size < 0 or self.min_pattern_size < 0 or self.min_pattern_size > self.max_pattern_size:
            raise ValueError("max_pattern_size, min_pattern_size must be >=0, with min_pattern_size <= max_pattern_size. "
                             "Set both to 0 to disable repetitive pattern detection.")
        if self.max_pattern_size > 0 and self.min_count < 2:
            raise ValueError("min_count must be >= 2 to detect repetitive patterns in engine output. "
                             "If you do not wish to detect repetitive patterns, set max_pattern_size to 0.")


class StreamOptions(OpenAIBaseModel):
    include_usage: bool | None = False
    continuous_usage_stats: bool | None = False


class FunctionDefinition(OpenAIBaseModel):
    name: str
    description: str | None = None
    parameters: dict[str, Any] | None = None


class ChatCompletionToolsParam(OpenAIBaseModel):
    type: Literal["function"] = "function"
    function: FunctionDefinition


class JsonSchemaResponseFormat(OpenAIBaseModel):
    name: str
    description: str | None = None
    json_schema: dict[str, Any] | None = Field(default=None, alias="schema")
    strict: bool | None = None


class LegacyStructuralTag(OpenAIBaseModel):
    begin: str
    structural_tag_schema: dict[str, Any] | None = Field(default=None, alias="schema")
    end: str


class LegacyStructuralTagResponseFormat(OpenAIBaseModel):
    type: Literal["structural_tag"]
    structures: list[LegacyStructuralTag]
    triggers: list[str]


class StructuralTagResponseFormat(OpenAIBaseModel):
    type: Literal["structural_tag"]
    format: Any


class ResponseFormat(OpenAIBaseModel):
    type: Literal["text", "json_object", "json_schema"]
    json_schema: JsonSchemaResponseFormat | None = None


AnyResponseFormat = ResponseFormat | StructuralTagResponseFormat | LegacyStructuralTagResponseFormat


def validate_structural_tag_shape(rf):
    # vLLM then compiles the tag with xgrammar, which this emulation skips.
    try:
        TypeAdapter(LegacyStructuralTagResponseFormat | StructuralTagResponseFormat).validate_python(rf)
    except ValidationError:
        raise VLLMValidationError("Invalid response_format structural_tag specification.", parameter="response_format")


class ChatCompletionNamedFunction(OpenAIBaseModel):
    name: str


class ChatCompletionNamedToolChoiceParam(OpenAIBaseModel):
    function: ChatCompletionNamedFunction
    type: Literal["function"] = "function"


def _check_logprobs_common(data):
    if data.get("logprob_token_ids") and data.get("use_beam_search"):
        raise VLLMValidationError("`logprob_token_ids` is not supported with beam search.", parameter="logprob_token_ids")


def _check_prompt_logprobs(data):
    if (prompt_logprobs := data.get("prompt_logprobs")) is not None:
        if data.get("stream") and (prompt_logprobs > 0 or prompt_logprobs == -1):
            raise VLLMValidationError("`prompt_logprobs` are not available when `stream=True`.", parameter="prompt_logprobs")
        if prompt_logprobs < 0 and prompt_logprobs != -1:
            raise VLLMValidationError("`prompt_logprobs` must be a positive value or -1.", parameter="prompt_logprobs",
                                      value=prompt_logprobs)


class ChatCompletionRequest(OpenAIBaseModel):
    messages: list[dict[str, Any]]
    model: str | None = None
    frequency_penalty: float | None = 0.0
    logit_bias: dict[str, float] | None = None
    logprobs: bool | None = False
    top_logprobs: int | None = 0
    max_tokens: int | None = None
    max_completion_tokens: int | None = None
    n: int | None = 1
    presence_penalty: float | None = 0.0
    response_format: AnyResponseFormat | None = None
    seed: int | None = Field(None, ge=I64[0], le=I64[1])
    stop: str | list[str] | None = []
    stream: bool | None = False
    stream_options: StreamOptions | None = None
    temperature: float | None = None
    top_p: float | None = None
    tools: list[ChatCompletionToolsParam] | None = None
    tool_choice: (Literal["none"] | Literal["auto"] | Literal["required"] | ChatCompletionNamedToolChoiceParam | None) = "none"
    reasoning_effort: Literal["none", "minimal", "low", "medium", "high", "xhigh", "max"] | None = None
    thinking_token_budget: ThinkingTokenBudget = None
    include_reasoning: bool = True
    parallel_tool_calls: bool | None = True
    user: str | None = None
    use_beam_search: bool = False
    top_k: int | None = None
    min_p: float | None = None
    repetition_penalty: float | None = None
    length_penalty: float = 1.0
    stop_token_ids: list[int] | None = []
    include_stop_str_in_output: bool = False
    ignore_eos: bool = False
    min_tokens: int = 0
    skip_special_tokens: bool = True
    spaces_between_special_tokens: bool = True
    truncate_prompt_tokens: Annotated[int, Field(ge=-1, le=I64[1])] | None = None
    truncation_side: Literal["left", "right"] | None = None
    prompt_logprobs: int | None = None
    logprob_token_ids: list[int] | None = None
    allowed_token_ids: list[int] | None = None
    bad_words: list[str] = Field(default_factory=list)
    echo: bool = False
    add_generation_prompt: bool = True
    continue_final_message: bool = False
    add_special_tokens: bool = False
    documents: list[dict[str, str]] | None = None
    chat_template: str | None = None
    chat_template_kwargs: dict[str, Any] | None = None
    media_io_kwargs: dict[str, dict[str, Any]] | None = None
    mm_processor_kwargs: dict[str, Any] | None = None
    structured_outputs: StructuredOutputsParams | None = None
    priority: int = Field(default=0, ge=I64[0], le=I64[1])
    request_id: str = "x"
    return_tokens_as_token_ids: bool | None = None
    return_token_ids: bool | None = None
    return_token_offsets: bool | None = False
    return_prompt_text: bool | None = None
    return_assistant_tokens_mask: bool = False
    cache_salt: str | None = None
    kv_transfer_params: dict[str, Any] | None = None
    ec_transfer_params: dict[str, Any] | None = None
    vllm_xargs: dict[str, str | int | float | list[str | int | float]] | None = None
    repetition_detection: RepetitionDetectionParams | None = None

    # Model validators in declaration order; pydantic runs them last first.
    @model_validator(mode="before")
    @classmethod
    def validate_response_format(cls, data):
        rf = data.get("response_format")
        if isinstance(rf, dict) and rf.get("type") == "json_schema" and rf.get("json_schema") is None:
            raise VLLMValidationError("When response_format type is 'json_schema', the 'json_schema' field must be provided.",
                                      parameter="response_format")
        if isinstance(rf, dict) and rf.get("type") == "structural_tag":
            validate_structural_tag_shape(rf)
        return data

    @model_validator(mode="before")
    @classmethod
    def validate_stream_options(cls, data):
        if data.get("stream_options") and not data.get("stream"):
            raise VLLMValidationError("Stream options can only be defined when `stream=True`.", parameter="stream_options")
        return data

    @model_validator(mode="before")
    @classmethod
    def check_logprobs(cls, data):
        _check_logprobs_common(data)
        if data.get("logprob_token_ids") and not data.get("logprobs"):
            raise VLLMValidationError("when using `logprob_token_ids`, `logprobs` must be set to true.", parameter="logprob_token_ids")
        _check_prompt_logprobs(data)
        if (top_logprobs := data.get("top_logprobs")) is not None:
            if top_logprobs < 0 and top_logprobs != -1:
                raise VLLMValidationError("`top_logprobs` must be a positive value or -1.", parameter="top_logprobs", value=top_logprobs)
            if (top_logprobs == -1 or top_logprobs > 0) and not data.get("logprobs"):
                raise VLLMValidationError("when using `top_logprobs`, `logprobs` must be set to true.", parameter="top_logprobs")
        return data

    @model_validator(mode="before")
    @classmethod
    def check_structured_outputs_count(cls, data):
        if data.get("structured_outputs", None) is None:
            return data
        so = data["structured_outputs"]
        count = sum(so.get(k) is not None for k in ("json", "regex", "choice"))
        if count > 1:
            raise VLLMValidationError("You can only use one kind of constraints for structured outputs ('json', 'regex' or 'choice').")
        if count > 0 and data.get("tool_choice", "none") not in ("none", "auto", "required"):
            raise VLLMValidationError("You can only either use constraints for structured outputs or tools, not both.")
        return data

    @model_validator(mode="before")
    @classmethod
    def check_tool_usage(cls, data):
        if data.get("tools") == []:
            raise ValueError("`tools` must not be an empty array. Either provide at least one tool or omit the field entirely.")
        if "tool_choice" not in data and data.get("tools"):
            data["tool_choice"] = "auto"
        if "tool_choice" in data and data["tool_choice"] == "none":
            return data
        if "tool_choice" in data and data["tool_choice"] is not None:
            if "tools" not in data or data["tools"] is None:
                raise VLLMValidationError("When using `tool_choice`, `tools` must be set.", parameter="tool_choice")
            if data["tool_choice"] not in ["auto", "required"] and not isinstance(data["tool_choice"], dict):
                raise VLLMValidationError(f"Invalid value for `tool_choice`: {data['tool_choice']}! "
                                          'Only named tools, "none", "auto" or "required" are supported.', parameter="tool_choice")
            usage = 'Correct usage: `{"type": "function", "function": {"name": "my_function"}}`'
            if isinstance(data["tool_choice"], dict):
                function = data["tool_choice"].get("function")
                if not isinstance(function, dict):
                    raise VLLMValidationError(f"Invalid value for `function`: `{function}` in `tool_choice`! {usage}",
                                              parameter="tool_choice.function")
                if "name" not in function:
                    raise VLLMValidationError(f"Expected field `name` in `function` in `tool_choice`! {usage}",
                                              parameter="tool_choice.function.name")
                name = function["name"]
                if not isinstance(name, str) or len(name) == 0:
                    raise VLLMValidationError(f"Invalid `name` in `function`: `{name}` in `tool_choice`! {usage}",
                                              parameter="tool_choice.function.name")
                if not any(t["function"]["name"] == name for t in data["tools"]):
                    raise VLLMValidationError("The tool specified in `tool_choice` does not match any of the specified `tools`",
                                              parameter="tool_choice")
        return data

    @model_validator(mode="before")
    @classmethod
    def check_generation_prompt(cls, data):
        if data.get("continue_final_message") and data.get("add_generation_prompt"):
            raise VLLMValidationError("Cannot set both `continue_final_message` and `add_generation_prompt` to True.")
        return data

    @model_validator(mode="before")
    @classmethod
    def check_cache_salt_support(cls, data):
        if data.get("cache_salt") is not None and (not isinstance(data["cache_salt"], str) or not data["cache_salt"]):
            raise VLLMValidationError("Parameter 'cache_salt' must be a non-empty string if provided.", parameter="cache_salt")
        return data


class CompletionRequest(OpenAIBaseModel):
    model: str | None = None
    prompt: (list[Annotated[int, Field(ge=0)]] | list[list[Annotated[int, Field(ge=0)]]] | str | list[str] | None) = None
    echo: bool | None = False
    frequency_penalty: float | None = 0.0
    logit_bias: dict[str, float] | None = None
    logprobs: int | None = None
    max_tokens: int | None = 16
    n: int = 1
    presence_penalty: float | None = 0.0
    seed: int | None = Field(None, ge=I64[0], le=I64[1])
    stop: str | list[str] | None = []
    stream: bool | None = False
    stream_options: StreamOptions | None = None
    suffix: str | None = None
    temperature: float | None = None
    top_p: float | None = None
    user: str | None = None
    use_beam_search: bool = False
    top_k: int | None = None
    min_p: float | None = None
    repetition_penalty: float | None = None
    length_penalty: float = 1.0
    stop_token_ids: list[int] | None = []
    include_stop_str_in_output: bool = False
    ignore_eos: bool = False
    min_tokens: int = 0
    skip_special_tokens: bool = True
    spaces_between_special_tokens: bool = True
    truncate_prompt_tokens: Annotated[int, Field(ge=-1, le=I64[1])] | None = None
    truncation_side: Literal["left", "right"] | None = None
    allowed_token_ids: list[int] | None = None
    prompt_logprobs: int | None = None
    logprob_token_ids: list[int] | None = None
    bad_words: list[str] = Field(default_factory=list)
    add_special_tokens: bool = True
    response_format: AnyResponseFormat | None = None
    structured_outputs: StructuredOutputsParams | None = None
    priority: int = Field(default=0, ge=I64[0], le=I64[1])
    request_id: str = "x"
    return_tokens_as_token_ids: bool | None = None
    return_token_ids: bool | None = None
    return_token_offsets: bool | None = False
    cache_salt: str | None = None
    kv_transfer_params: dict[str, Any] | None = None
    ec_transfer_params: dict[str, Any] | None = None
    vllm_xargs: dict[str, str | int | float | list[str | int | float]] | None = None
    repetition_detection: RepetitionDetectionParams | None = None
    thinking_token_budget: ThinkingTokenBudget = None

    @model_validator(mode="before")
    @classmethod
    def normalize_null_max_tokens(cls, data):
        if isinstance(data, dict) and data.get("max_tokens") is None:
            data = data.copy()
            data["max_tokens"] = 16
        return data

    @model_validator(mode="before")
    @classmethod
    def validate_response_format(cls, data):
        return ChatCompletionRequest.validate_response_format.__func__(cls, data)

    @model_validator(mode="before")
    @classmethod
    def check_structured_outputs_count(cls, data):
        if data.get("structured_outputs", None) is None:
            return data
        so = data["structured_outputs"]
        if sum(so.get(k) is not None for k in ("json", "regex", "choice")) > 1:
            raise VLLMValidationError("You can only use one kind of constraints for structured outputs ('json', 'regex' or 'choice').",
                                      parameter="structured_outputs")
        return data

    @model_validator(mode="before")
    @classmethod
    def check_logprobs(cls, data):
        _check_logprobs_common(data)
        if data.get("logprob_token_ids") and data.get("echo") and data.get("max_tokens") == 0:
            raise VLLMValidationError("`logprob_token_ids` is not supported when `echo=True` and `max_tokens=0` because no "
                                      "output tokens are generated.", parameter="logprob_token_ids")
        if data.get("logprob_token_ids") and data.get("logprobs") is None:
            raise VLLMValidationError("when using `logprob_token_ids`, `logprobs` must be set.", parameter="logprob_token_ids")
        _check_prompt_logprobs(data)
        if (logprobs := data.get("logprobs")) is not None and logprobs < 0:
            raise VLLMValidationError("`logprobs` must be a positive value.", parameter="logprobs", value=logprobs)
        return data

    @model_validator(mode="before")
    @classmethod
    def validate_stream_options(cls, data):
        return ChatCompletionRequest.validate_stream_options.__func__(cls, data)

    @model_validator(mode="before")
    @classmethod
    def validate_prompt_and_prompt_embeds(cls, data):
        prompt = data.get("prompt")
        if prompt is None or (isinstance(prompt, str) and prompt == ""):
            raise VLLMValidationError("Either prompt or prompt_embeds must be provided and non-empty.", parameter="prompt")
        return data

    @model_validator(mode="before")
    @classmethod
    def validate_prompt_list_length(cls, data):
        prompt = data.get("prompt")
        if isinstance(prompt, list) and prompt and not all(isinstance(p, int) for p in prompt) and len(prompt) > 1024:
            raise VLLMValidationError(f"prompt list length {len(prompt)} exceeds the maximum allowed count of 1024. "
                                      "To increase this limit, set the VLLM_MAX_COMPLETION_PROMPTS environment variable.",
                                      parameter="prompt")
        return data

    @model_validator(mode="before")
    @classmethod
    def check_cache_salt_support(cls, data):
        return ChatCompletionRequest.check_cache_salt_support.__func__(cls, data)


MODELS = {"chat": ChatCompletionRequest, "completion": CompletionRequest}
# Fields whose validated value the Go test compares for bodies that pass.
SHOWN = ["stop", "tool_choice", "stop_token_ids", "max_tokens", "truncate_prompt_tokens", "thinking_token_budget",
         "prompt", "n", "temperature", "top_k", "seed", "priority", "bad_words", "reasoning_effort"]


def run(endpoint, body_text):
    body = json.loads(body_text)
    try:
        v = MODELS[endpoint].model_validate(body)
    except ValidationError as e:
        return handle([{**x, "loc": ("body",) + tuple(x["loc"])} for x in e.errors(include_url=False)])
    dump = v.model_dump()
    return {"ok": type(v).__name__, "dump": {k: dump[k] for k in SHOWN if k in dump}}


M = '"messages":[{"role":"user","content":"hi"}]'
TOOLS = '"tools":[{"type":"function","function":{"name":"f"}}]'
TOOLS2 = '"tools":[{"type":"function","function":{"name":"f"}},{"type":"function","function":{"name":"g"}}]'
C, P = "chat", "completion"
cases = [
    ("chat_ok_minimal", C, "{" + M + "}"),
    ("chat_ok_tools_default_auto", C, "{" + M + "," + TOOLS + "}"),
    ("chat_ok_stop_string", C, "{" + M + ',"stop":"x","n":"2","temperature":"0.5","top_k":3.0}'),
    ("chat_ok_nulls", C, "{" + M + ',"stop":null,"stop_token_ids":null,"tool_choice":null,"n":null,"thinking_token_budget":-1}'),
    ("chat_ok_named_tool", C, "{" + M + "," + TOOLS + ',"tool_choice":{"type":"function","function":{"name":"f"}}}'),
    ("chat_ok_lax_values", C, "{" + M + ',"seed":"7","priority":true,"bad_words":["a"],"reasoning_effort":"xhigh","truncate_prompt_tokens":-1}'),
    ("chat_missing_messages", C, '{"max_tokens":"x","temperature":[1]}'),
    ("chat_messages_not_list", C, '{"messages":"hi"}'),
    ("chat_messages_items", C, '{"messages":[1,{"role":"user"}]}'),
    ("chat_empty_tools", C, "{" + M + ',"tools":[]}'),
    ("chat_tool_choice_without_tools", C, "{" + M + ',"tool_choice":"auto"}'),
    ("chat_tool_choice_bad_string", C, "{" + M + "," + TOOLS + ',"tool_choice":"sometimes"}'),
    ("chat_tool_choice_bad_int", C, "{" + M + "," + TOOLS + ',"tool_choice":5}'),
    ("chat_tool_choice_no_function", C, "{" + M + "," + TOOLS + ',"tool_choice":{"type":"function"}}'),
    ("chat_tool_choice_function_list", C, "{" + M + "," + TOOLS + ',"tool_choice":{"function":[1,"a"]}}'),
    ("chat_tool_choice_no_name", C, "{" + M + "," + TOOLS + ',"tool_choice":{"function":{}}}'),
    ("chat_tool_choice_empty_name", C, "{" + M + "," + TOOLS + ',"tool_choice":{"function":{"name":""}}}'),
    ("chat_tool_choice_int_name", C, "{" + M + "," + TOOLS + ',"tool_choice":{"function":{"name":3}}}'),
    ("chat_tool_choice_unknown_tool", C, "{" + M + "," + TOOLS + ',"tool_choice":{"function":{"name":"g"}}}'),
    ("chat_tool_choice_required_without_tools", C, "{" + M + ',"tool_choice":"required"}'),
    ("chat_named_tool_choice_without_tools", C, "{" + M + ',"tool_choice":{"type":"function","function":{"name":"f"}}}'),
    ("chat_named_tool_choice_tools_null", C, "{" + M + ',"tools":null,"tool_choice":{"type":"function","function":{"name":"f"}}}'),
    ("chat_auto_tool_choice_tools_null", C, "{" + M + ',"tools":null,"tool_choice":"auto"}'),
    ("chat_ok_tool_choice_none_without_tools", C, "{" + M + ',"tool_choice":"none"}'),
    ("chat_ok_tool_choice_null_with_tools", C, "{" + M + "," + TOOLS + ',"tool_choice":null}'),
    ("chat_ok_required_with_tools", C, "{" + M + "," + TOOLS + ',"tool_choice":"required"}'),
    ("chat_tool_choice_bool", C, "{" + M + "," + TOOLS + ',"tool_choice":true}'),
    ("chat_tool_choice_float", C, "{" + M + "," + TOOLS + ',"tool_choice":1.5}'),
    ("chat_tool_choice_list", C, "{" + M + "," + TOOLS + ',"tool_choice":["auto"]}'),
    ("chat_tool_choice_capitalised", C, "{" + M + "," + TOOLS + ',"tool_choice":"Auto"}'),
    ("chat_ok_named_second_tool", C, "{" + M + "," + TOOLS2 + ',"tool_choice":{"type":"function","function":{"name":"g"}}}'),
    ("chat_named_unknown_among_several", C, "{" + M + "," + TOOLS2 + ',"tool_choice":{"type":"function","function":{"name":"h"}}}'),
    ("chat_named_case_differs", C, "{" + M + "," + TOOLS + ',"tool_choice":{"type":"function","function":{"name":"F"}}}'),
    ("chat_named_name_null", C, "{" + M + "," + TOOLS + ',"tool_choice":{"function":{"name":null}}}'),
    ("chat_named_function_null", C, "{" + M + "," + TOOLS + ',"tool_choice":{"function":null}}'),
    ("chat_named_function_string", C, "{" + M + "," + TOOLS + ',"tool_choice":{"function":"f"}}'),
    ("chat_named_type_not_function", C, "{" + M + "," + TOOLS + ',"tool_choice":{"type":"custom","function":{"name":"f"}}}'),
    ("chat_named_type_null", C, "{" + M + "," + TOOLS + ',"tool_choice":{"type":null,"function":{"name":"f","x":1}},"n":"x"}'),
    ("chat_ok_named_type_absent", C, "{" + M + "," + TOOLS + ',"tool_choice":{"function":{"name":"f"}}}'),
    ("chat_named_unknown_empty_tools", C, "{" + M + ',"tools":[],"tool_choice":{"type":"function","function":{"name":"f"}}}'),
    ("chat_none_empty_tools", C, "{" + M + ',"tools":[],"tool_choice":"none"}'),
    ("chat_named_unknown_with_so", C, "{" + M + "," + TOOLS + ',"tool_choice":{"function":{"name":"g"}},"structured_outputs":{"regex":"a"}}'),
    ("chat_both_prompts", C, "{" + M + ',"continue_final_message":true,"add_generation_prompt":1}'),
    ("chat_cache_salt_empty", C, "{" + M + ',"cache_salt":""}'),
    ("chat_cache_salt_int", C, "{" + M + ',"cache_salt":5}'),
    ("chat_stream_options_without_stream", C, "{" + M + ',"stream_options":{"include_usage":true}}'),
    ("chat_top_logprobs_without_logprobs", C, "{" + M + ',"top_logprobs":3}'),
    ("chat_top_logprobs_negative", C, "{" + M + ',"top_logprobs":-3,"logprobs":true}'),
    ("chat_prompt_logprobs_stream", C, "{" + M + ',"prompt_logprobs":1,"stream":true}'),
    ("chat_prompt_logprobs_negative", C, "{" + M + ',"prompt_logprobs":-2}'),
    ("chat_logprob_ids_beam", C, "{" + M + ',"logprob_token_ids":[1],"use_beam_search":true}'),
    ("chat_logprob_ids_without_logprobs", C, "{" + M + ',"logprob_token_ids":[1]}'),
    ("chat_json_schema_missing", C, "{" + M + ',"response_format":{"type":"json_schema"}}'),
    ("chat_so_two_kinds", C, "{" + M + ',"structured_outputs":{"regex":"a","choice":["b"]}}'),
    ("chat_so_with_named_tool", C, "{" + M + "," + TOOLS + ',"tool_choice":{"function":{"name":"f"}},"structured_outputs":{"regex":"a"}}'),
    ("chat_so_none", C, "{" + M + ',"structured_outputs":{"disable_any_whitespace":true}}'),
    ("chat_so_grammar_and_json_object", C, "{" + M + ',"structured_outputs":{"grammar":"g","json_object":true}}'),
    ("chat_response_format_type", C, "{" + M + ',"response_format":{"type":"xml"}}'),
    ("chat_response_format_no_name", C, "{" + M + ',"response_format":{"type":"json_schema","json_schema":{"schema":{}}}}'),
    ("chat_response_format_string", C, "{" + M + ',"response_format":"json"}'),
    ("chat_response_format_bad_schema", C, "{" + M + ',"response_format":{"type":"json_schema","json_schema":{"name":1,"schema":[],"strict":"x"}}}'),
    ("chat_structural_tag_bad_shape", C, "{" + M + ',"response_format":{"type":"structural_tag"}}'),
    ("chat_structural_tag_bad_items", C, "{" + M + ',"response_format":{"type":"structural_tag","structures":[{"begin":1}],"triggers":"x"}}'),
    ("chat_ok_structural_tag", C, "{" + M + ',"response_format":{"type":"structural_tag","structures":[{"begin":"<a>","end":"</a>"}],"triggers":["<a"]}}'),
    ("chat_ok_json_schema", C, "{" + M + ',"response_format":{"type":"json_schema","json_schema":{"name":"n","schema":{"type":"object"}}}}'),
    ("completion_response_format_type", P, '{"prompt":"a","response_format":{"type":5}}'),
    ("chat_stop_int", C, "{" + M + ',"stop":5}'),
    ("chat_stop_items", C, "{" + M + ',"stop":["a",1,null]}'),
    ("chat_literals", C, "{" + M + ',"reasoning_effort":"huge","truncation_side":"middle"}'),
    ("chat_truncate_below", C, "{" + M + ',"truncate_prompt_tokens":-2}'),
    ("chat_seed_range", C, "{" + M + ',"seed":9223372036854775808,"priority":-9223372036854775809}'),
    ("chat_thinking_budget_float", C, "{" + M + ',"thinking_token_budget":1.5}'),
    ("chat_thinking_budget_negative", C, "{" + M + ',"thinking_token_budget":-5}'),
    ("chat_thinking_budget_bool", C, "{" + M + ',"thinking_token_budget":true}'),
    ("chat_numbers", C, "{" + M + ',"n":1.5,"top_k":"x","min_p":"y","length_penalty":null,"min_tokens":null}'),
    ("chat_lists", C, "{" + M + ',"stop_token_ids":[1,"a"],"allowed_token_ids":"x","bad_words":null,"logit_bias":{"1":"a"}}'),
    ("chat_tools_shape", C, "{" + M + ',"tools":[1,{"type":"fn","function":{"name":2}},{"type":"function"}]}'),
    ("chat_dicts", C, "{" + M + ',"documents":[{"a":1}],"chat_template_kwargs":[],"kv_transfer_params":"x","stream_options":5,"stream":true}'),
    ("chat_repetition_detection", C, "{" + M + ',"repetition_detection":{"max_pattern_size":3}}'),
    ("completion_ok_text", P, '{"prompt":"hi"}'),
    ("completion_ok_texts", P, '{"prompt":["a","b"],"max_tokens":null}'),
    ("completion_ok_ids", P, '{"prompt":[1,2,3],"max_tokens":5,"n":2}'),
    ("completion_ok_id_lists", P, '{"prompt":[[1],[2,3]]}'),
    ("completion_ok_digit_strings", P, '{"prompt":["1","2"]}'),
    ("completion_ok_bools", P, '{"prompt":[true,false]}'),
    ("completion_ok_empty_list", P, '{"prompt":[]}'),
    ("completion_no_prompt", P, '{}'),
    ("completion_empty_prompt", P, '{"prompt":""}'),
    ("completion_prompt_int", P, '{"prompt":5}'),
    ("completion_prompt_mixed", P, '{"prompt":[1,"a"]}'),
    ("completion_prompt_negative", P, '{"prompt":[-1]}'),
    ("completion_prompt_nested_mixed", P, '{"prompt":[[1],"x"]}'),
    ("completion_prompt_strs_mixed", P, '{"prompt":["a",1]}'),
    ("completion_logprobs_negative", P, '{"prompt":"a","logprobs":-1}'),
    ("completion_logprob_ids_without_logprobs", P, '{"prompt":"a","logprob_token_ids":[1]}'),
    ("completion_logprob_ids_echo_zero", P, '{"prompt":"a","logprob_token_ids":[1],"echo":true,"max_tokens":0,"logprobs":1}'),
    ("completion_so_two_kinds", P, '{"prompt":"a","structured_outputs":{"json":"{}","regex":"b"}}'),
    ("completion_fields", P, '{"prompt":"a","n":null,"suffix":3,"add_special_tokens":"maybe"}'),
]

if __name__ == "__main__":
    for n, e, b in cases:
        print(json.dumps({"name": n, "endpoint": e, "body": b, "result": run(e, b)}, ensure_ascii=False))
