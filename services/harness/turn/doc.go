// Package turn is Link Harness's turn: one message in, the model's answer
// out, the model's tool calls made on the way (security.txt "Link
// Harness", "Messages from others").
//
// # A turn
//
// [Runner.Turn] appends the message to the conversation's log, reads the
// prompt's files anew, starts the tools' turn ([tools.Set.Begin]), builds
// the model's window from the log, and calls the model; while it asks for
// calls, it makes them and calls it again. Every event is appended to the
// log as it happens (the message, each of the model's answers with the
// calls it kept, each call's answer, a summary), so a turn cut short by a
// crash leaves a conversation that reads whole.
//
// # Its limits
//
//   - At most 8 rounds of calls a turn; after the eighth the model is
//     offered no tool and must answer in words, and a call it still asks
//     for is dropped (logged).
//   - At most 16 calls a round: the model's others are dropped, and the
//     model is told so and the log says so.
//   - At most 32 KiB of each call's answer is kept; the model is told
//     where it was cut.
//
// # Whose words the model reads
//
// A tool's answer reaches the model as the tool's (the tool role, named
// by its call), never as the owner's. In a turn where no tool is offered,
// an earlier tool's answer is written into the text instead, saying which
// tool answered, not the owner, with each of its lines quoted ("> ").
// A message from others (Incoming.From, as the endpoint has it from
// Link-From) is told as theirs: the model is told who speaks, each line
// of it quoted, so no paragraph of it reads as the owner's.
//
// # The window
//
// Each answer records where the model's window started (a message's
// number and time, and its token count). The next turn starts there; a
// window whose start no longer names a message of the log (its number or
// time differ) is made anew from the log's messages. A window past the
// model's context (model.WindowTokens, less room for the answer) is
// summarized: what leaves it goes to the model, which may first call
// memory__remember only to save notes (any other call is refused and
// said), then writes a summary, kept in the log as a "summary" event and
// sent at the window's head as the model's own words. A model that says
// it can't hold a window Link's estimate let through (its context-length
// error) gets the window summarized, the turn's message alone kept, and
// the request once more; a second such answer fails the turn.
//
// # Security
//
// Holds nothing between turns; a turn holds the tools' sessions it
// opened, ended with it.
//
// Trusts: the model's answers no more than a tool's: a call to a name not
// offered in the turn is answered as an error and sent nowhere; its
// arguments go to the tool as the model wrote them, and the tool, through
// the proxy, checks them.
package turn
