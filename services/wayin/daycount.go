package wayin

import "lnk.dev/lnk/internal/daycount"

// DayFile counts, in the agent's settings folder, the messages from its
// schedules and subagents taken on one day (UTC), for [tool.scheduler]
// per_day (internal/daycount): {"day": "YYYY-MM-DD", "taken": N}.
var DayFile = daycount.File{Name: "wayin-day.json", Key: "taken"}
