import Foundation
import GraphKitTesting

/// A certificate authority and server certificates it signed, made with openssl in `folder`
/// for TLS tests on loopback: `authority` (the CA's certificate, PEM), and per server a PEM file
/// holding its certificate and key, as a server is given them.
public struct TestCertificates: Sendable {
    public let authority: String
    private let folder: URL

    /// Makes the authority ("GraphKit Test CA", valid two days).
    public init(in folder: URL) throws {
        self.folder = folder
        authority = folder.appendingPathComponent("ca.pem").path
        try TestMedia.runTool("openssl", ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=GraphKit Test CA",
                                          "-keyout", folder.appendingPathComponent("ca.key").path, "-out", authority])
    }

    /// A server certificate for `names` (subjectAltName entries: `IP:127.0.0.1`, `DNS:camera.example`),
    /// signed by the authority; returns the PEM file of certificate and key.
    public func server(_ name: String, for names: [String]) throws -> String {
        let key = folder.appendingPathComponent("\(name).key").path, request = folder.appendingPathComponent("\(name).csr").path
        let certificate = folder.appendingPathComponent("\(name).crt").path, extensions = folder.appendingPathComponent("\(name).ext").path
        try "subjectAltName=\(names.joined(separator: ","))\n".write(toFile: extensions, atomically: true, encoding: .utf8)
        try TestMedia.runTool("openssl", ["req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=\(name)", "-keyout", key, "-out", request])
        try TestMedia.runTool("openssl", ["x509", "-req", "-in", request, "-CA", authority, "-CAkey", folder.appendingPathComponent("ca.key").path,
                                          "-CAcreateserial", "-days", "2", "-extfile", extensions, "-out", certificate])
        let both = folder.appendingPathComponent("\(name).pem")
        try (String(contentsOfFile: certificate, encoding: .utf8) + String(contentsOfFile: key, encoding: .utf8)).write(to: both, atomically: true, encoding: .utf8)
        return both.path
    }
}
