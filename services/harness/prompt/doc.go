// Package prompt reads the files Link Harness's system prompt is made of,
// at each message, from the agent's own folder (Agent/): its standing
// instructions (instructions/instruction.md), its notes (memory/notes.md)
// and its skills (skills/<name>/SKILL.md), and writes them into the
// prompt, each headed with who wrote it (security.txt "Link Harness").
//
// # Security
//
// Holds: one handle on the Agent/ folder ([resolve.Root]), taken at
// [Open]; every name is opened beneath it, each folder on the way from the
// one before, never through a link (internal/resolve).
//
// May do: read, never write, the prompt's files and skills.
//
// Trusts: nothing under the folder. The agent may write its notes (through
// memory's remember) and, where its sandbox file's [files] write names
// them, its instructions and skills, so every file is hostile input.
//
// Refuses, each said once in the log with its reason, the turn going on
// without it:
//   - a configured name that is absolute or holds ".." (refused at [Open]);
//   - a file reached through a link, or that is a folder, a pipe or
//     anything but a regular file: left out;
//   - past [MaxFile] (64 KiB) of a file or of a skill's head: cut there,
//     and the prompt says it was cut;
//   - a skills/ that is a link, a skill folder that is a link, a SKILL.md
//     that is a link: left out; past [MaxSkills] skills, the rest by name.
//
// A line the agent wrote (its notes; its instructions where it may write
// them) that would start a markdown heading gets a backslash before it, so
// it can't open a section that seems the owner's.
//
// Standing instructions are headed "written by the owner", or "written by
// the owner or you (the agent)" where [Options.AgentWritesInstructions]
// says the sandbox file lets the agent write instructions/. A skill's name
// and description go into the prompt as instructions; the model reads the
// rest of SKILL.md through its file tool, as it would any file.
package prompt
