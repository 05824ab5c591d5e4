// Command feedping checks that feed URLs answer with HTTP 200 within a timeout.
package main

import (
	"fmt"
	"net/http"
	"os"
	"time"
)

// pingFeed sends a HEAD request and reports the status code and latency.
func pingFeed(client *http.Client, url string) (int, time.Duration, error) {
	start := time.Now()
	resp, err := client.Head(url)
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	return resp.StatusCode, time.Since(start), nil
}

func main() {
	client := &http.Client{Timeout: 5 * time.Second}
	failed := 0
	for _, url := range os.Args[1:] {
		status, latency, err := pingFeed(client, url)
		if err != nil || status != http.StatusOK {
			failed++
			fmt.Printf("FAIL %s (%v, status %d)\n", url, err, status)
			continue
		}
		fmt.Printf("ok   %s %s\n", url, latency.Round(time.Millisecond))
	}
	if failed > 0 {
		os.Exit(1)
	}
}
