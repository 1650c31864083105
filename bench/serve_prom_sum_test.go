package bench

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"reflect"
	"testing"
)

func TestHistogramAdd(t *testing.T) {
	inf := math.Inf(1)
	a := Histogram{Count: 3, Sum: 0.3, Buckets: []HistogramBucket{{0.001, 1}, {0.01, 2}, {inf, 3}}}
	b := Histogram{Count: 5, Sum: 0.05, Buckets: []HistogramBucket{{0.001, 4}, {0.01, 5}, {inf, 5}}}
	got := Histogram{}.Add(a).Add(b)
	want := Histogram{Count: 8, Sum: 0.35, Buckets: []HistogramBucket{{0.001, 5}, {0.01, 7}, {inf, 8}}}
	if got.Count != want.Count || math.Abs(got.Sum-want.Sum) > 1e-12 || !reflect.DeepEqual(got.Buckets, want.Buckets) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
}

func TestScrapeHistogramsSumsReplicas(t *testing.T) {
	var urls []string
	for i := 1; i <= 3; i++ {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			fmt.Fprintf(w, "# TYPE %[1]s histogram\n%[1]s_bucket{le=\"0.001\"} %[2]d\n%[1]s_bucket{le=\"+Inf\"} %[2]d\n%[1]s_sum 0.%[2]d\n%[1]s_count %[2]d\n",
				AddedLatencyMetric, i)
		}))
		defer srv.Close()
		urls = append(urls, srv.URL)
	}
	h, err := ScrapeHistograms(context.Background(), http.DefaultClient, urls, AddedLatencyMetric)
	if err != nil {
		t.Fatal(err)
	}
	if h.Count != 6 || len(h.Buckets) != 2 || h.Buckets[0].Count != 6 || h.Buckets[1].Count != 6 {
		t.Fatalf("sum of three replicas = %+v", h)
	}
	if _, err := ScrapeHistograms(context.Background(), http.DefaultClient, append(urls, "http://127.0.0.1:1/metrics"), AddedLatencyMetric); err == nil {
		t.Fatal("want an error when one replica cannot be scraped")
	}
}
