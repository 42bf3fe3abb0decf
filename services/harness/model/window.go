package model

import (
	"strings"
	"unicode/utf8"
)

// UnknownWindow is the window of a model Link doesn't know.
const UnknownWindow = 32768

// windows are the context windows of the models Link knows, by the
// start of their names (lower case, without a router's "provider/" and
// a local runtime's ":tag"); the longest start that matches wins. A
// name that matches none is UnknownWindow: a guess too small only sends
// less of the conversation, where one too large fails the turn.
var windows = []struct {
	Prefix string
	Tokens int
}{
	{"link-builtin", 32768},
	// Anthropic.
	{"claude-", 200000},
	// OpenAI.
	{"gpt-5", 400000},
	{"gpt-4.1", 1047576},
	{"gpt-4o", 128000},
	{"gpt-4-turbo", 128000},
	{"gpt-4", 8192},
	{"gpt-3.5-turbo", 16385},
	{"o1", 200000},
	{"o3", 200000},
	{"o4-mini", 200000},
	// Open models, as Ollama, llama.cpp and vLLM name them.
	{"llama3.1", 131072},
	{"llama3.2", 131072},
	{"llama3.3", 131072},
	{"llama-3.1", 131072},
	{"llama-3.2", 131072},
	{"llama-3.3", 131072},
	{"llama3", 8192},
	{"qwen2.5", 32768},
	{"qwen3", 40960},
	{"mistral-nemo", 131072},
	{"mistral", 32768},
	{"gemma3", 131072},
	{"gemma2", 8192},
	{"phi4", 16384},
	{"phi3", 131072},
	{"deepseek-r1", 131072},
	{"deepseek-chat", 131072},
	{"deepseek-reasoner", 131072},
	{"gpt-oss", 131072},
}

// WindowTokens is a model's context window: 32,768 for a model Link
// doesn't know.
func WindowTokens(model string) int {
	name := strings.ToLower(strings.TrimSpace(model))
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		name = name[i+1:]
	}
	if i := strings.IndexByte(name, ':'); i >= 0 {
		name = name[:i]
	}
	best, tokens := 0, UnknownWindow
	for _, w := range windows {
		if strings.HasPrefix(name, w.Prefix) && len(w.Prefix) > best {
			best, tokens = len(w.Prefix), w.Tokens
		}
	}
	return tokens
}

// perMessage is what each message costs beyond its words (its role and
// the format's framing), as the providers count it, rounded up.
const perMessage = 4

// EstimateTokens is the count Link plans windows with when the provider
// gives none: the system prompt, every message's words, calls and
// answers, and the tools offered (names, descriptions, schemas). It
// counts a token for each 3 bytes of ASCII (English prose runs near 4,
// code and JSON nearer 3) and one for each other character (CJK text
// is often a token a character), so that it errs high: a window planned
// on it holds, at the cost of sending a little less.
func EstimateTokens(req Request) int {
	n := textTokens(req.System)
	for _, m := range req.Messages {
		n += perMessage + textTokens(m.Text) + textTokens(m.ToolCallID) + textTokens(m.ToolName)
		for _, c := range m.ToolCalls {
			n += perMessage + textTokens(c.ID) + textTokens(c.Name) + textTokens(string(c.Arguments))
		}
	}
	for _, t := range req.Tools {
		n += perMessage + textTokens(t.Name) + textTokens(t.Description) + textTokens(string(t.Schema))
	}
	return n
}

// textTokens is s's estimated tokens.
func textTokens(s string) int {
	ascii, other := 0, 0
	for i := 0; i < len(s); {
		if s[i] < utf8.RuneSelf {
			ascii++
			i++
			continue
		}
		_, size := utf8.DecodeRuneInString(s[i:])
		other++
		i += size
	}
	return (ascii+2)/3 + other
}
