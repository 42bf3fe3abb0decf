package runtool

import "lnk.dev/lnk/internal/daycount"

// startsFile is starts.json: how many background commands started on one
// day (UTC), for [tool.run] background_per_day (internal/daycount).
var startsFile = daycount.File{Name: "starts.json", Key: "starts"}
