package sandbox

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"time"
)

// watchEvery is how often the init counts what the program holds.
const watchEvery = 50 * time.Millisecond

// watch counts, as the namespace's init, the tasks and the resident
// memory of every process in the namespace, and calls over with what was
// exceeded once either goes past its limit. It never returns otherwise.
func watch(l Limits, over func(string)) {
	page := int64(os.Getpagesize())
	t := time.NewTicker(watchEvery)
	defer t.Stop()
	for range t.C {
		tasks, rss := usage(page)
		switch {
		case l.Tasks > 0 && tasks > l.Tasks:
			over(fmt.Sprintf("tasks: %d processes and threads, over the limit of %d", tasks, l.Tasks))
			return
		case l.Memory > 0 && rss > l.Memory:
			over(fmt.Sprintf("memory: %s resident, over the limit of %s", mib(rss), mib(l.Memory)))
			return
		}
	}
}

// usage sums the threads and resident memory of the processes /proc
// shows: in the namespace, all of the program's.
func usage(page int64) (tasks int, rss int64) {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return 0, 0
	}
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // gone since
		}
		// After the command's name in parentheses: state is field 3,
		// num_threads field 20, rss (in pages) field 24.
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		f := bytes.Fields(b[i+1:])
		if len(f) < 22 {
			continue
		}
		n, _ := strconv.Atoi(string(f[17]))
		pages, _ := strconv.ParseInt(string(f[21]), 10, 64)
		tasks += max(n, 1)
		rss += pages * page
	}
	return tasks, rss
}

// mib writes a byte count in MiB.
func mib(n int64) string {
	return strconv.FormatFloat(float64(n)/(1<<20), 'f', 0, 64) + " MiB"
}
