package caps

import (
	"errors"
	"fmt"
	"os"
	"strings"
)

// AdoptAgent makes an agent that arrived by a move (lnk agent receive)
// under the ID and name it came with. Of what the stream's agent.toml
// says it keeps only what names the agent and its harness: its harness,
// its [start] command (run in its sandbox as any agent's) and a model
// not on this machine's loopback (a box could name any local port that
// answers). Never no_sandbox, nor its ports (chosen here at its start).
// sandbox is the agent's layer as the receive narrowed it, checked as
// any spec file. It returns the agent made and what it left out, one
// line each. No agent here may have the ID: ErrDuplicateID.
func AdoptAgent(home string, in *Agent, sandbox []byte) (*Agent, []string, error) {
	if err := CheckName(in.Name); err != nil {
		return nil, nil, err
	}
	if !isID(in.ID) {
		return nil, nil, at(ErrAgentFile, quote(in.ID), "an agent's ID is 32 lowercase hex digits")
	}
	if held, err := AgentWithID(home, in.ID); err != nil {
		return nil, nil, err
	} else if held != "" {
		return nil, nil, at(ErrDuplicateID, fmt.Sprintf("%s (held by agent %s here)", in.ID, quote(held)), "lnk agent list shows the agents here by name and ID")
	}
	if _, err := ParseSpec("the stream's sandbox.toml", sandbox); err != nil {
		return nil, nil, err
	}
	a := newAgent(in.Name)
	a.ID = in.ID
	var left []string
	if in.Harness != "" {
		if CheckName(in.Harness) == nil {
			a.Harness = in.Harness
		} else {
			left = append(left, "its harness "+quote(in.Harness)+", not a name")
		}
	}
	if in.Start != nil {
		s := *in.Start
		a.Start = &s
		if err := a.CheckStart(); err != nil {
			return nil, nil, err
		}
	}
	if in.Model != nil {
		if err := in.Model.Check(); err == nil && in.Model.LoopbackPort() == 0 {
			m := *in.Model
			a.Model = &m
		} else {
			left = append(left, "its model on the other machine's loopback or not a model Link takes (lnk agent start "+in.Name+" --model sets one)")
		}
	}
	if in.NoSandbox {
		left = append(left, "no_sandbox: it runs in its sandbox here (lnk agent start "+in.Name+" --no-sandbox turns it off)")
	}
	out, err := createAgent(home, a, sandbox)
	return out, left, err
}

// AgentWithID names the agent here with ID id, or "" when none has it.
// An agent's folder whose agent.toml can't be read is an error, never
// "not that ID": what it holds can't be told.
func AgentWithID(home, id string) (string, error) {
	l, err := layoutFor(home)
	if err != nil {
		return "", err
	}
	if _, err := Resolve(l.Agents()); errors.Is(err, ErrMissing) {
		return "", nil
	} else if err != nil {
		return "", err
	}
	ents, err := os.ReadDir(l.Agents())
	if err != nil {
		return "", err
	}
	for _, e := range ents {
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") || CheckName(e.Name()) != nil {
			continue
		}
		a, err := loadAgent(l, e.Name())
		if err != nil {
			return "", fmt.Errorf("agent %s: %w", quote(e.Name()), err)
		}
		if a.ID == id {
			return a.Name, nil
		}
	}
	return "", nil
}
