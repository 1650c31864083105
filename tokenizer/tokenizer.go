// Package tokenizer loads Hugging Face tokenizer.json files and encodes and
// decodes text with the same results as the Rust `tokenizers` library 0.23.
package tokenizer

// Tokenizer is immutable after loading and safe for concurrent use.
type Tokenizer struct{}

// AddedToken is an entry of tokenizer.json's added_tokens.
type AddedToken struct {
	ID         int    `json:"id"`
	Content    string `json:"content"`
	SingleWord bool   `json:"single_word"`
	LStrip     bool   `json:"lstrip"`
	RStrip     bool   `json:"rstrip"`
	Normalized bool   `json:"normalized"`
	Special    bool   `json:"special"`
}

// Load reads a tokenizer.json file.
func Load(path string) (*Tokenizer, error) { panic("skeleton: replaced by the tokenizer implementation") }

// Parse builds a tokenizer from tokenizer.json bytes.
func Parse(data []byte) (*Tokenizer, error) { panic("skeleton") }

// Encode returns the token IDs of text, as HF Tokenizer.encode(text, add_special_tokens).
func (t *Tokenizer) Encode(text string, addSpecialTokens bool) []int { panic("skeleton") }

// Decode returns the text of ids, as HF Tokenizer.decode(ids, skip_special_tokens).
func (t *Tokenizer) Decode(ids []int, skipSpecialTokens bool) string { panic("skeleton") }

// IDToToken returns the token string of id (added tokens first), as HF id_to_token.
func (t *Tokenizer) IDToToken(id int) (string, bool) { panic("skeleton") }

// TokenToID returns the id of a token string (added tokens first), as HF token_to_id.
func (t *Tokenizer) TokenToID(token string) (int, bool) { panic("skeleton") }

// IsSpecial reports whether id is an added token marked special.
func (t *Tokenizer) IsSpecial(id int) bool { panic("skeleton") }

// Len is transformers' len(tokenizer): one more than the largest id in the vocabulary or added tokens.
func (t *Tokenizer) Len() int { panic("skeleton") }

// TokensToString applies the decoder to token strings, as transformers' convert_tokens_to_string.
func (t *Tokenizer) TokensToString(tokens []string) string { panic("skeleton") }

// AddedTokens returns the added tokens in tokenizer.json order.
func (t *Tokenizer) AddedTokens() []AddedToken { panic("skeleton") }
