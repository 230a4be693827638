package plan_test

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/loadcurve/loadcurve/curve/plan"
)

func TestReadProfileCSV(t *testing.T) {
	cases := []struct {
		name   string
		in     string
		points []plan.Point
		period time.Duration
	}{
		{"clock times with a header", "time,rate\n00:00,20\n08:00,120\n18:00,60\n",
			[]plan.Point{pt(0, 20), pt(8*time.Hour, 120), pt(18*time.Hour, 60)}, 24 * time.Hour},
		{"clock times with seconds, spaces, CRLF, comments and blank lines", "# a day\r\n\r\n 00:00:30 , 1.5\r\n23:59:59,0\r\n",
			[]plan.Point{pt(30*time.Second, 1.5), pt(23*time.Hour+59*time.Minute+59*time.Second, 0)}, 24 * time.Hour},
		// Seconds: the period is the last time plus the last interval, 7200 + 3600.
		{"seconds", "0,5\n3600,10\n7200,2.5\n",
			[]plan.Point{pt(0, 5), pt(time.Hour, 10), pt(2*time.Hour, 2.5)}, 3 * time.Hour},
		{"fractional seconds", "t,req_per_s\n0,1\n0.5,2\n", []plan.Point{pt(0, 1), pt(500*time.Millisecond, 2)}, time.Second},
		// Durations: 1h30m + (1h30m − 30m) = 2h30m.
		{"durations", "0s,1\n30m,2\n1h30m,3\n", []plan.Point{pt(0, 1), pt(30*time.Minute, 2), pt(90*time.Minute, 3)}, 150 * time.Minute},
		{"mixed seconds and durations", "0,1\n1h,2\n", []plan.Point{pt(0, 1), pt(time.Hour, 2)}, 2 * time.Hour},
		// One line: the next whole day after its time.
		{"one line", "0,7\n", []plan.Point{pt(0, 7)}, 24 * time.Hour},
		{"one late line", "30h,7\n", []plan.Point{pt(30*time.Hour, 7)}, 48 * time.Hour},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, err := plan.ReadProfileCSV(strings.NewReader(c.in), "p.csv")
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(f.Points, c.points) || f.Period != c.period {
				t.Errorf("got %v over %v, want %v over %v", f.Points, f.Period, c.points, c.period)
			}
			if errs := f.Validate(); errs != nil {
				t.Errorf("the forecast read is invalid: %v", errs)
			}
		})
	}
}

func TestReadProfileCSVErrors(t *testing.T) {
	cases := []struct {
		name string
		in   string
		want []string // the lines of the error, in order
	}{
		{"missing rate", "time,rate\n00:00,20\n08:00\n09:00,\n",
			[]string{"p.csv:3: missing rate: want time,rate", "p.csv:4: missing rate: want time,rate"}},
		{"negative, NaN, infinite and non-numeric rates", "0,-1\n1,NaN\n2,+Inf\n3,lots\n4,1e999\n",
			[]string{
				"p.csv:1: rate -1 is negative: want req/s ≥ 0",
				"p.csv:2: rate NaN is not a finite number",
				"p.csv:3: rate +Inf is not a finite number",
				`p.csv:4: rate "lots" is not a number`,
				"p.csv:5: rate 1e999 is not a finite number",
			}},
		{"decreasing and repeated times", "00:00,1\n08:00,2\n07:00,3\n08:00,4\n09:00,5\n",
			[]string{
				"p.csv:3: time 07:00 is not after the previous time 08:00 (line 2): times must increase",
				"p.csv:4: time 08:00 is not after the previous time 08:00 (line 2): times must increase",
			}},
		{"malformed lines", "time,rate\n0,1,2\n1h:5,3\nsoon,4\n-5,1\n25:00,1\n",
			[]string{
				"p.csv:2: 3 fields: want 2, time,rate",
				`p.csv:3: time "1h:5" is not a clock time HH:MM or HH:MM:SS from 00:00 to 23:59:59`,
				`p.csv:4: time "soon" is neither seconds (5400), a duration (1h30m) nor a clock time (07:30)`,
				"p.csv:5: time -5 is negative",
				`p.csv:6: time "25:00" is not a clock time HH:MM or HH:MM:SS from 00:00 to 23:59:59`,
			}},
		{"24:00", "00:00,1\n24:00,1\n",
			[]string{"p.csv:2: time 24:00 is past the end of the day: the profile repeats every 24h, so 24:00 is the next day's 00:00"}},
		{"mixed kinds", "00:00,1\n3600,2\n",
			[]string{"p.csv:2: time 3600 is not a clock time, but the times before it are: use one kind throughout"}},
		{"a header only after data", "0,1\ntime,rate\n",
			[]string{
				`p.csv:2: time "time" is neither seconds (5400), a duration (1h30m) nor a clock time (07:30)`,
				`p.csv:2: rate "rate" is not a number`,
			}},
		{"no data", "time,rate\n# nothing yet\n", []string{"p.csv: no data: want lines of time,rate"}},
		{"empty", "", []string{"p.csv: no data: want lines of time,rate"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := plan.ReadProfileCSV(strings.NewReader(c.in), "p.csv")
			if err == nil {
				t.Fatal("no error")
			}
			if got := strings.Split(err.Error(), "\n"); !reflect.DeepEqual(got, c.want) {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(c.want, "\n"))
			}
		})
	}
}

// The example profile in testdata reads and plans as the worked case does.
func TestProfileFile(t *testing.T) {
	path := filepath.Join("testdata", "day.csv")
	file, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	f, err := plan.ReadProfileCSV(file, path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(f, workedForecast) {
		t.Errorf("%s reads as %+v, want %+v", path, f, workedForecast)
	}
}
