package caps

// ErrPerDay is the rule of a message from the agent's schedules or
// subagents refused because [tool.scheduler] per_day of them were taken
// today (UTC): the way in refuses it (services/wayin); the scheduler's
// runner drops that firing and keeps the job's next, never retrying it.
var ErrPerDay = rule("per-day", "the day's messages from the agent's schedules and subagents were all taken ([tool.scheduler] per_day)")
