// Command vcsim serves govmomi's vCenter simulator (simulator.VPX) over HTTPS on
// 127.0.0.1 for the vm_ops tests: it prints its SDK URL on one line, then runs until
// killed. With -trace, the SOAP traffic goes to a file (the tests count the mutating
// calls in it); with -cert, the server's self-signed certificate (PEM) goes to a file, so a
// test can trust it as a CA. Built by scripts/build-vcsim (GOPATH mode, Debian's govmomi source).
package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"flag"
	"fmt"
	"log"
	"math/big"
	"net"
	"net/url"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/vmware/govmomi/simulator"
)

func main() {
	port := flag.Int("port", 0, "TCP port on 127.0.0.1 (0: any free port)")
	user := flag.String("user", "user", "the only user name that may log in")
	pass := flag.String("pass", "pass", "its password")
	trace := flag.String("trace", "", "append every SOAP request and response to this file")
	certOut := flag.String("cert", "", "write the server's certificate (PEM) to this file")
	flag.Parse()

	if *trace != "" {
		f, err := os.OpenFile(*trace, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			log.Fatalf("vcsim: %v", err)
		}
		simulator.Trace, simulator.TraceFile = true, f
	}

	model := simulator.VPX()
	if err := model.Create(); err != nil {
		log.Fatalf("vcsim: create model: %v", err)
	}
	defer model.Remove()
	// vCenter speaks HTTPS only; a self-signed certificate, like a fresh vCenter. Our own
	// (P-256): the simulator's default test certificate has a key OpenSSL calls too weak.
	cert, err := selfSigned(*certOut)
	if err != nil {
		log.Fatalf("vcsim: certificate: %v", err)
	}
	model.Service.TLS = &tls.Config{Certificates: []tls.Certificate{cert}}
	model.Service.Listen = &url.URL{
		Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(*port)),
		User: url.UserPassword(*user, *pass),
	}
	server := model.Service.NewServer()
	defer server.Close()

	sdk := *server.URL
	sdk.User = nil
	fmt.Println(sdk.String())
	os.Stdout.Sync()

	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	<-stop
}

// selfSigned makes a certificate for 127.0.0.1 and ::1 that signs itself, and writes it
// (PEM) to path unless path is empty.
func selfSigned(path string) (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	template := x509.Certificate{
		SerialNumber:          big.NewInt(time.Now().UnixNano()),
		Subject:               pkix.Name{CommonName: "vcsim", Organization: []string{"vcsim"}},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:           []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:           []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1")},
		DNSNames:              []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, &template, &template, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, err
	}
	if path != "" {
		block := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
		if err := os.WriteFile(path, block, 0o644); err != nil {
			return tls.Certificate{}, err
		}
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}
