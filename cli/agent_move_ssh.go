package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"lnk.dev/lnk/caps"
	"lnk.dev/lnk/helpers/keybroker/stream"
	"lnk.dev/lnk/internal/textsafe"
	"lnk.dev/lnk/services/move"
)

// lnk agent move NAME --ssh user@host: the whole move over one SSH
// connection. The other machine's lnk agent receive --new-key makes a
// per-transfer key, sends its public half back, and reads the sealed
// stream; the switch waits for this machine to pause the agent. Once the
// agent answers there, running, with its ID, this machine keeps its own
// folder and Home in History and deletes the rest (move.Leave).

func init() {
	register("agent", func() *cobra.Command {
		var target, sshConfig, remote string
		c := &cobra.Command{
			Use:   "move NAME --ssh USER@HOST",
			Short: "Move the agent to another machine over SSH: sealed to a key made there for this move, then started there and ended here",
			Long: "Move the agent over SSH (ssh -F FILE with --ssh-config): its files and memory, then, once paused here, its settings, secrets and state,\n" +
				"sealed to a key the other machine makes for this move. Once it runs there with its ID, this machine writes ~/.lnk/moved/<id>.toml,\n" +
				"keeps its own folder and Home in ~/Link/History/Agents, and deletes its keys, harnesses' homes and service. If it doesn't answer there,\n" +
				"everything stays here, stopped.",
			Args:              cobra.ExactArgs(1),
			ValidArgsFunction: completeAgents,
			RunE: func(c *cobra.Command, args []string) error {
				if err := checkSSHTarget(target); err != nil {
					return err
				}
				home, a, err := loadAgent(args[0])
				if err != nil {
					return err
				}
				if err := caps.CheckNotMoved(home, a); err != nil {
					return auditRefusal("agent move", a.Name, agentErr(err, a.Name))
				}
				ctx, stop := signal.NotifyContext(c.Context(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
				defer stop()
				ssh := func(cmd ...string) *exec.Cmd {
					sa := []string{"-o", "BatchMode=yes"}
					if sshConfig != "" {
						sa = append(sa, "-F", sshConfig)
					}
					return exec.CommandContext(ctx, "ssh", append(append(sa, "--", target, remote), cmd...)...)
				}
				// The receive there starts the agent once in place and
				// keeps it only if it answers; else it undoes the whole
				// receive, and everything stays here.
				out, err := sendOverSSH(ctx, c, home, a, ssh("agent", "receive", "--new-key", "--start"))
				if err != nil {
					return err
				}
				var st struct {
					ID      string `json:"id"`
					Running bool   `json:"running"`
				}
				if json.Unmarshal(lastJSON(out), &st) != nil || st.ID != a.ID || !st.Running {
					return Fail(ExitFailure, fmt.Errorf("agent %s arrived at %s but does not answer there running with its ID: everything stays here, stopped", a.Name, textsafe.Line(target)),
						"lnk agent start "+a.Name+" runs it here again", "lnk agent move "+a.Name+" --ssh "+target+" tries again")
				}
				dest, err := leaveAfterMove(home, a.Name, target)
				if err != nil {
					return err
				}
				fmt.Fprintf(c.OutOrStdout(), "agent %s moved to %s and runs there; here it is ended: its own folder and Home are in %s\n", a.Name, textsafe.Line(target), dest)
				return nil
			},
		}
		c.Flags().StringVar(&target, "ssh", "", "the machine to move to, USER@HOST")
		c.Flags().StringVar(&sshConfig, "ssh-config", "", "an ssh config file (ssh -F): its port, key and known hosts")
		c.Flags().StringVar(&remote, "remote-lnk", "lnk", "the other machine's command for Link's CLI (default: lnk, on its PATH)")
		return c
	})
}

// leaveAfterMove ends agent name here once it runs at target: its
// background commands end and their records and outputs go as lnk agent
// delete's do (endBackground, agent_background.go), then the rest
// (move.Leave).
func leaveAfterMove(home, name, target string) (string, error) {
	return move.Leave(home, name, target, func() error { return endBackground(home, name) })
}

// checkSSHTarget refuses a target ssh would read as an option or that
// holds anything but a user and a host.
func checkSSHTarget(t string) error {
	if t == "" {
		return Usage("--ssh USER@HOST names the machine to move to")
	}
	if strings.HasPrefix(t, "-") || strings.ContainsAny(t, " \t\r\n'\"`$;&|<>\\") || strings.Count(t, "@") > 1 {
		return Usage(fmt.Sprintf("--ssh %q is not USER@HOST", textsafe.Line(t)), "lnk agent move NAME --ssh user@box.example")
	}
	return nil
}

// sendOverSSH runs lnk agent receive --new-key --start there and sends
// the agent to the key it prints, pausing the agent here before the
// switch. It returns what the receive printed after the key.
func sendOverSSH(ctx context.Context, c *cobra.Command, home string, a *caps.Agent, rc *exec.Cmd) ([]byte, error) {
	in, err := rc.StdinPipe()
	if err != nil {
		return nil, err
	}
	outPipe, err := rc.StdoutPipe()
	if err != nil {
		return nil, err
	}
	// The other machine's stderr is its text, not Link's: each escape
	// sequence and control is removed before the owner's terminal.
	errw := textsafe.NewWriter(c.ErrOrStderr())
	defer errw.Flush()
	rc.Stderr = errw
	if err := rc.Start(); err != nil {
		return nil, fmt.Errorf("ssh: %w", err)
	}
	out := bufio.NewReaderSize(outPipe, 4096)
	line, err := out.ReadString('\n')
	pub, perr := stream.ParsePublicKey(line)
	if err != nil || perr != nil {
		in.Close()
		rc.Wait()
		return nil, Fail(ExitFailure, fmt.Errorf("the other machine sent no key for the move: nothing was sent"), "lnk agent receive --new-key must run there: --remote-lnk names the command that runs it")
	}
	s := &move.Send{Home: home, Name: a.Name, To: pub,
		ReadyToSwitch: func() error {
			if _, err := stopAgent(home, a); err != nil {
				return err
			}
			if err := caps.MarkPaused(home, a.Name, true); err != nil {
				return err
			}
			return readyToSwitch(home, a)
		},
		Note: func(n string) { fmt.Fprintln(c.ErrOrStderr(), "lnk: "+textsafe.Line(n)) },
	}
	serr := s.Run(ctx, in)
	in.Close()
	var rest bytes.Buffer
	io.Copy(&rest, io.LimitReader(out, 64<<10))
	werr := rc.Wait()
	if serr != nil {
		return nil, moveErr(serr, a.Name)
	}
	if werr != nil {
		return nil, Fail(ExitFailure, fmt.Errorf("the other machine did not take agent %s (%v): nothing of it is kept there, and it stays here, paused", a.Name, werr),
			"lnk agent start "+a.Name+" runs it here again")
	}
	// What it put in place, without its status (the JSON, last).
	shown := rest.Bytes()
	if i := jsonStart(shown); i >= 0 {
		shown = shown[:i]
	}
	fmt.Fprint(c.OutOrStdout(), textLines(string(shown)))
	return rest.Bytes(), nil
}

// jsonStart is where the last top-level JSON object of out begins (a
// line that is "{"), or -1.
func jsonStart(out []byte) int {
	if bytes.HasPrefix(out, []byte("{\n")) {
		return 0
	}
	if i := bytes.LastIndex(out, []byte("\n{\n")); i >= 0 {
		return i + 1
	}
	return -1
}

// lastJSON is the last top-level JSON object of out.
func lastJSON(out []byte) []byte {
	i := jsonStart(out)
	if i < 0 {
		return nil
	}
	return out[i:]
}

// textLines is the other machine's output as shown: textsafe.Clean's,
// each escape sequence removed whole, newlines and tabs kept.
func textLines(s string) string {
	return string(textsafe.Clean([]byte(s)))
}
