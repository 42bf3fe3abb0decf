package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"

	"lnk.dev/lnk/internal/jsonscan"
	"lnk.dev/lnk/internal/ownerfile"
	"lnk.dev/lnk/internal/toolname"
)

// SubagentFile is where a subagent's conversation (task-<id>) keeps its
// tool list and model, beside its log: {"tools": [...], "model": "..."}
// (0600, written whole by internal/ownerfile, never through a link).
// Only Link Harness writes chats/: every other sandbox of the agent
// reads it at most.
const SubagentFile = "subagent.json"

// maxSubagent bounds the file; maxSubagentTools its list.
const (
	maxSubagent      = 64 << 10
	maxSubagentTools = 256
)

// Subagent is what a subagent's conversation keeps: the granted names of
// its tools (never nil: [] is none) and its model ("" the agent's own).
type Subagent struct {
	Tools []string `json:"tools"`
	Model string   `json:"model,omitempty"`
}

// ParseSubagent reads a subagent.json strictly: one JSON object, each
// field once, none unknown, the list present (null is refused, never
// read as every tool), each name a tool's.
func ParseSubagent(b []byte) (*Subagent, error) {
	if len(b) > maxSubagent {
		return nil, errors.New("subagent.json is larger than 64 KiB")
	}
	var s Subagent
	if err := jsonscan.Strict(b, &s); err != nil {
		return nil, fmt.Errorf("subagent.json: %w", err)
	}
	if err := s.check(); err != nil {
		return nil, err
	}
	return &s, nil
}

func (s *Subagent) check() error {
	if s.Tools == nil || len(s.Tools) > maxSubagentTools {
		return errors.New("subagent.json names no tool list, or more than 256 tools")
	}
	for _, t := range s.Tools {
		if err := toolname.CheckTool(t); err != nil {
			return fmt.Errorf("subagent.json: %w", err)
		}
	}
	if s.Model != "" {
		if err := toolname.CheckModel(s.Model); err != nil {
			return fmt.Errorf("subagent.json: %w", err)
		}
	}
	return nil
}

// Subagent is the list and model the conversation keeps; nil, nil when
// it keeps none. A file that can't be read or parsed is an error: a
// list unread is never "every tool".
func (v *Conversation) Subagent() (*Subagent, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	b, err := ownerfile.ReadFile(v.dirFd(), SubagentFile, ownerfile.Private, maxSubagent)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("conversation %s's %s: %w", v.thread, SubagentFile, err)
	}
	return ParseSubagent(b)
}

// KeepSubagent writes s as the conversation's subagent.json, whole.
func (v *Conversation) KeepSubagent(s *Subagent) error {
	if err := s.check(); err != nil {
		return err
	}
	b, _ := json.Marshal(s)
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.closed {
		return errors.New("the conversation is closed")
	}
	return ownerfile.WriteAtomic(v.dirFd(), SubagentFile, append(b, '\n'), ownerfile.Write{Mode: 0o600})
}
