package plan

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
)

// ReadProfileCSV reads a demand profile, one "time,rate" line per step: rate req/s holds from
// time until the next line's time. name labels the problems (a file name, usually).
//
// Times are seconds from the start of the profile ("5400", "90.5"), Go durations ("1h30m"),
// or clock times of a day ("07:30", "07:30:15"); one file uses clock times throughout or
// none. Times must be strictly increasing, rates finite numbers ≥ 0. Spaces around fields,
// blank lines and lines starting with "#" are ignored, and so is a first line whose two
// fields are neither a time nor a number (a header such as "time,rate").
//
// The period, after which the profile repeats: with clock times, one day (24h); otherwise
// the last time plus the last interval (lines at 0, 3600 and 7200 give 10800 s, so the last
// step lasts as long as the one before it), or with a single line the next whole day after
// its time. When the first time is after 0, the demand before it is the last line's rate,
// carried over from the previous period (see [Forecast]).
//
// Every problem is reported, each as "name:line: what was wrong", joined into one error.
func ReadProfileCSV(r io.Reader, name string) (Forecast, error) {
	var (
		problems []error
		points   []Point
		clock    = -1 // unknown, 0 durations, 1 clock times
		prevText string
		prevLine int
		prevT    time.Duration
		havePrev bool
		seenLine bool
	)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1024*1024)
	for line := 1; sc.Scan(); line++ {
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		bad := func(format string, a ...any) {
			problems = append(problems, fmt.Errorf("%s:%d: %s", name, line, fmt.Sprintf(format, a...)))
		}
		fields := strings.Split(text, ",")
		for i := range fields {
			fields[i] = strings.TrimSpace(fields[i])
		}
		if !seenLine {
			seenLine = true
			if isHeader(fields) {
				continue
			}
		}
		if len(fields) > 2 {
			bad("%d fields: want 2, time,rate", len(fields))
			continue
		}
		t, isClock, terr := parseTime(fields[0])
		ok := terr == nil
		if terr != nil {
			bad("%v", terr)
		} else {
			kind := 0
			if isClock {
				kind = 1
			}
			switch {
			case clock == -1:
				clock = kind
			case kind != clock && isClock:
				bad("time %s is a clock time, but the times before it are not: use one kind throughout", fields[0])
				ok = false
			case kind != clock:
				bad("time %s is not a clock time, but the times before it are: use one kind throughout", fields[0])
				ok = false
			}
		}
		if ok && havePrev && t <= prevT {
			bad("time %s is not after the previous time %s (line %d): times must increase", fields[0], prevText, prevLine)
			ok = false
		}
		if ok {
			prevT, prevText, prevLine, havePrev = t, fields[0], line, true
		}
		var rate float64
		switch {
		case len(fields) < 2 || fields[1] == "":
			bad("missing rate: want time,rate")
			ok = false
		default:
			var rerr error
			rate, rerr = parseRate(fields[1])
			if rerr != nil {
				bad("%v", rerr)
				ok = false
			}
		}
		if ok {
			points = append(points, Point{T: t, Rate: rate})
		}
	}
	if err := sc.Err(); err != nil {
		problems = append(problems, fmt.Errorf("%s: reading: %w", name, err))
	}
	if len(problems) > 0 {
		return Forecast{}, errors.Join(problems...)
	}
	if len(points) == 0 {
		return Forecast{}, fmt.Errorf("%s: no data: want lines of time,rate", name)
	}
	f := Forecast{Points: points}
	last := points[len(points)-1].T
	switch {
	case clock == 1:
		f.Period = Day
	case len(points) >= 2:
		f.Period = 2*last - points[len(points)-2].T
	default:
		f.Period = (last/Day + 1) * Day
	}
	return f, nil
}

// isHeader: two fields, neither a time nor a number.
func isHeader(fields []string) bool {
	if len(fields) != 2 {
		return false
	}
	if _, _, err := parseTime(fields[0]); err == nil {
		return false
	}
	_, err := strconv.ParseFloat(fields[1], 64)
	return err != nil
}

// parseTime reads seconds, a Go duration or a clock time (isClock).
func parseTime(s string) (t time.Duration, isClock bool, err error) {
	if s == "" {
		return 0, false, errors.New("missing time: want time,rate")
	}
	if strings.Contains(s, ":") {
		t, err := parseClock(s)
		return t, true, err
	}
	if v, err := strconv.ParseFloat(s, 64); err == nil {
		switch {
		case !finite(v):
			return 0, false, fmt.Errorf("time %s is not a finite number of seconds", s)
		case v < 0:
			return 0, false, fmt.Errorf("time %s is negative", s)
		case v*float64(time.Second) > math.MaxInt64:
			return 0, false, fmt.Errorf("time %s is too large", s)
		}
		return time.Duration(math.Round(v * float64(time.Second))), false, nil
	}
	if d, err := time.ParseDuration(s); err == nil {
		if d < 0 {
			return 0, false, fmt.Errorf("time %s is negative", s)
		}
		return d, false, nil
	}
	return 0, false, fmt.Errorf("time %q is neither seconds (5400), a duration (1h30m) nor a clock time (07:30)", s)
}

// parseClock reads HH:MM or HH:MM:SS, 00:00 to 23:59:59.
func parseClock(s string) (time.Duration, error) {
	parts := strings.Split(s, ":")
	bad := fmt.Errorf("time %q is not a clock time HH:MM or HH:MM:SS from 00:00 to 23:59:59", s)
	if len(parts) != 2 && len(parts) != 3 {
		return 0, bad
	}
	limits := []int{24, 60, 60}
	var v [3]int
	for i, p := range parts {
		if len(p) == 0 || len(p) > 2 || strings.Trim(p, "0123456789") != "" {
			return 0, bad
		}
		n, _ := strconv.Atoi(p)
		if n >= limits[i] {
			if i == 0 && n == 24 {
				return 0, fmt.Errorf("time %s is past the end of the day: the profile repeats every 24h, so 24:00 is the next day's 00:00", s)
			}
			return 0, bad
		}
		v[i] = n
	}
	return time.Duration(v[0])*time.Hour + time.Duration(v[1])*time.Minute + time.Duration(v[2])*time.Second, nil
}

// parseRate reads a finite rate ≥ 0.
func parseRate(s string) (float64, error) {
	v, err := strconv.ParseFloat(s, 64)
	switch {
	case err != nil && errors.Is(err, strconv.ErrRange):
		return 0, fmt.Errorf("rate %s is not a finite number", s)
	case err != nil:
		return 0, fmt.Errorf("rate %q is not a number", s)
	case !finite(v):
		return 0, fmt.Errorf("rate %s is not a finite number", s)
	case v < 0:
		return 0, fmt.Errorf("rate %s is negative: want req/s ≥ 0", s)
	}
	return v, nil
}
