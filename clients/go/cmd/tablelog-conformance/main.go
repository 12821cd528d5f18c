// Command tablelog-conformance runs the conformance scenario
// (clients/conformance/scenario.json) against a live server through the Go wrapper:
//
//	go run ./cmd/tablelog-conformance --address 127.0.0.1:50051
//
// It calls as the member its token names (a recorder), and the steps marked
// "as": "spectator" with the spectator's token (--spectator-token or
// $TABLELOG_SPECTATOR_TOKEN).
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"

	"github.com/tablelog/tablelog/clients/go/conformance"
	"github.com/tablelog/tablelog/clients/go/tablelog"
)

func main() {
	address := flag.String("address", envOr("TABLELOG_ADDRESS", tablelog.DefaultAddress), "host:port of the server")
	path := flag.String("scenario", defaultScenario(), "the scenario file")
	token := flag.String("token", "", "the bearer token (default $TABLELOG_TOKEN, then the credentials file)")
	spectator := flag.String("spectator-token", os.Getenv("TABLELOG_SPECTATOR_TOKEN"),
		"the token of the spectator the scenario's spectator steps call as (default $TABLELOG_SPECTATOR_TOKEN)")
	ca := flag.String("ca", "", "a PEM CA bundle: connect over TLS (default $TABLELOG_CA)")
	flag.Parse()
	os.Exit(run(*address, *path, *token, *spectator, *ca))
}

func run(address, path, token, spectatorToken, ca string) int {
	data, err := os.ReadFile(path)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	var scenario conformance.Scenario
	decoder := json.NewDecoder(bytes.NewReader(data))
	decoder.DisallowUnknownFields()
	if err := decoder.Decode(&scenario); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", path, err)
		return 2
	}
	// The steps counted from the raw file, apart from the typed decoding the runner uses.
	var raw struct {
		Steps []json.RawMessage `json:"steps"`
	}
	if err := json.Unmarshal(data, &raw); err != nil || len(raw.Steps) == 0 {
		fmt.Fprintf(os.Stderr, "%s: the scenario has no steps\n", path)
		return 2
	}
	connections := map[string][]tablelog.Option{
		"a": {tablelog.WithToken(token)},
		"b": {tablelog.WithToken(token)},
	}
	if spectatorToken != "" {
		connections[conformance.SpectatorClient] = []tablelog.Option{tablelog.WithToken(spectatorToken)}
	}
	clients := map[string]*tablelog.Client{}
	for name, options := range connections {
		options = append(options, tablelog.WithClientName("tablelog-go-conformance/0.1.0"), tablelog.WithCA(ca))
		client, err := tablelog.Dial(address, options...)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 2
		}
		defer client.Close()
		clients[name] = client
	}
	runner := conformance.NewRunner(clients, &scenario, func(line string) { fmt.Println(line) })
	passed, failed := runner.Run(context.Background())
	// A run that skipped steps has not shown conformance.
	if failed == 0 && passed != len(raw.Steps) {
		fmt.Printf("FAIL ran %d of the scenario's %d steps\n", passed, len(raw.Steps))
		failed = 1
	}
	fmt.Printf("conformance: %d passed, %d failed\n", passed, failed)
	if failed > 0 {
		return 1
	}
	return 0
}

func envOr(name, fallback string) string {
	if value := os.Getenv(name); value != "" {
		return value
	}
	return fallback
}

// defaultScenario is clients/conformance/scenario.json beside this module.
func defaultScenario() string {
	candidates := []string{filepath.Join("..", "conformance", "scenario.json")}
	if _, file, _, ok := runtime.Caller(0); ok {
		candidates = append(candidates, filepath.Join(filepath.Dir(file), "..", "..", "..", "conformance", "scenario.json"))
	}
	for _, candidate := range candidates {
		if _, err := os.Stat(candidate); err == nil {
			return candidate
		}
	}
	return candidates[0]
}
