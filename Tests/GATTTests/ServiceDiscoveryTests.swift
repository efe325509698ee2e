// SPDX-License-Identifier: Apache-2.0
import ATT
import Bounded
import GATT
import Testing
import TestSupport

let ancs = ATTUUID.uuid128(UUID128("7905F431-B5CE-4E99-A40F-4B1E122D00D0"))
let notificationSource = ATTUUID.uuid128(UUID128("9FBF120D-6301-42D9-8C58-25E699A21DBD"))
let controlPoint = ATTUUID.uuid128(UUID128("69D1D8F3-45E1-49A8-9821-9BBDFDAAD9D9"))
let dataSource = ATTUUID.uuid128(UUID128("22EAC6E9-24D6-4BB5-BE44-B36ACE7C7BFB"))

/// Runs a discovery against scripted responses: each step is the request we
/// expect and the response to give.
func run(_ discovery: inout ServiceDiscovery, mtu: Int = 23, _ script: [(request: String, response: String)]) -> ServiceDiscovery.Progress {
    var out = ByteBuffer(capacity: 600)
    var progress = ServiceDiscovery.Progress.continuing
    for (i, step) in script.enumerated() {
        guard discovery.nextRequest(into: &out, mtu: mtu) else {
            Issue.record("step \(i): no request, expected \(step.request)")
            return progress
        }
        #expect(out.hexString == step.request, "step \(i)")
        let response = hex(step.response)
        guard let pdu = try? ATTPDU.decode(response.span) else {
            Issue.record("step \(i): bad scripted response")
            return progress
        }
        progress = discovery.handle(pdu, in: response.span)
        if progress != .continuing { return progress }
    }
    return progress
}

@Suite("GATT client: ANCS discovery")
struct ServiceDiscoveryTests {
    func ancsDiscovery() -> ServiceDiscovery {
        ServiceDiscovery(service: ancs, wanted: [notificationSource, controlPoint, dataSource, nil])
    }

    @Test("ANCS with characteristics spread over several Read By Type responses at MTU 23")
    func spreadOverResponses() {
        var d = ancsDiscovery()
        let progress = run(&d, [
            ("06 01 00 FF FF 00 28 " + Wire.ancs, "07 0B 00 14 00"),
            ("08 0C 00 14 00 03 28", "09 15 0C 00 10 0D 00 " + Wire.ns),
            ("08 0D 00 14 00 03 28", "09 15 0F 00 08 10 00 " + Wire.cp),
            ("08 10 00 14 00 03 28", "09 15 11 00 10 12 00 " + Wire.ds),
            ("08 12 00 14 00 03 28", "01 08 12 00 0A"),
            ("04 0E 00 0E 00", "05 01 0E 00 02 29"),
            ("04 13 00 14 00", "05 01 13 00 02 29 14 00 01 29"),
        ])
        #expect(progress == .done)
        #expect(d.serviceStart == 0x0B && d.serviceEnd == 0x14)
        #expect(d.characteristic(notificationSource) == DiscoveredCharacteristic(
            uuid: notificationSource, declarationHandle: 0x0C, valueHandle: 0x0D, properties: .notify, endHandle: 0x0E, cccdHandle: 0x0E))
        #expect(d.characteristic(controlPoint)?.valueHandle == 0x10)
        #expect(d.characteristic(controlPoint)?.cccdHandle == 0)
        #expect(d.characteristic(dataSource)?.cccdHandle == 0x13)
    }

    @Test("an unknown characteristic in the ANCS service is ignored")
    func unknownCharacteristicIgnored() {
        var d = ancsDiscovery()
        let other = String(repeating: "AB ", count: 16)
        let progress = run(&d, mtu: 185, [
            ("06 01 00 FF FF 00 28 " + Wire.ancs, "07 20 00 30 00"),
            ("08 21 00 30 00 03 28", "09 15 21 00 10 22 00 " + Wire.ns + " 24 00 02 25 00 " + other + "27 00 10 28 00 " + Wire.ds),
            ("08 28 00 30 00 03 28", "01 08 28 00 0A"),
            ("04 23 00 23 00", "05 01 23 00 02 29"),
            ("04 29 00 30 00", "05 01 29 00 02 29"),
        ])
        #expect(progress == .done)
        #expect(d.characteristic(notificationSource)?.endHandle == 0x23, "ends before the unknown characteristic")
        #expect(d.characteristic(dataSource)?.cccdHandle == 0x29)
        #expect(d.characteristic(controlPoint) == nil)
    }

    @Test("ANCS absent is reported as not found, not as a failure")
    func serviceAbsent() {
        var d = ancsDiscovery()
        #expect(run(&d, [("06 01 00 FF FF 00 28 " + Wire.ancs, "01 06 01 00 0A")]) == .serviceNotFound)
    }

    @Test("handles that go backwards or leave the service are a malformed response, not a loop")
    func hostileHandles() {
        var d = ancsDiscovery()
        #expect(run(&d, [
            ("06 01 00 FF FF 00 28 " + Wire.ancs, "07 0B 00 14 00"),
            ("08 0C 00 14 00 03 28", "09 07 0C 00 10 0D 00 00 2A 0C 00 10 0D 00 01 2A"),
        ]) == .failed(.malformedResponse))
        var e = ancsDiscovery()
        #expect(run(&e, [
            ("06 01 00 FF FF 00 28 " + Wire.ancs, "07 0B 00 14 00"),
            ("08 0C 00 14 00 03 28", "09 07 30 00 10 31 00 00 2A"),
        ]) == .failed(.malformedResponse))
    }

    @Test("an error other than Attribute Not Found fails the discovery with its code")
    func attError() {
        var d = ancsDiscovery()
        #expect(run(&d, [
            ("06 01 00 FF FF 00 28 " + Wire.ancs, "07 0B 00 14 00"),
            ("08 0C 00 14 00 03 28", "01 08 0C 00 05"),
        ]) == .failed(.attError(opcode: 0x08, code: 0x05)))
    }

    @Test("Service Changed discovery in the GATT service against our own server's answers")
    func againstOwnServer() {
        var server = GATTServer(deviceName: GATTServer.DeviceName("w"))
        var d = ServiceDiscovery(service: .uuid16(GATTUUID.genericAttribute), wanted: [.uuid16(GATTUUID.serviceChanged), nil, nil, nil])
        var out = ByteBuffer(capacity: 600)
        var answer = ByteBuffer(capacity: 600)
        var progress = ServiceDiscovery.Progress.continuing
        var steps = 0
        while progress == .continuing && steps < 10 && d.nextRequest(into: &out, mtu: 23) {
            let request = out.toArray()
            let pdu = try! ATTPDU.decode(request.span)
            _ = server.respond(to: pdu, in: request.span, into: &answer, mtu: 23)
            let reply = answer.toArray()
            progress = d.handle(try! ATTPDU.decode(reply.span), in: reply.span)
            steps += 1
        }
        #expect(progress == .done)
        #expect(d.characteristic(.uuid16(GATTUUID.serviceChanged))?.valueHandle == GATTServer.serviceChangedValueHandle)
        #expect(d.characteristic(.uuid16(GATTUUID.serviceChanged))?.cccdHandle == GATTServer.serviceChangedCCCDHandle)
    }

    @Test("a Service Changed value is two handles; anything else is malformed")
    func serviceChangedRange() {
        let range = ServiceChangedRange(hex("0B 00 FF FF").span)
        #expect(range == ServiceChangedRange(start: 0x0B, end: 0xFFFF))
        #expect(range?.overlaps(start: 0x20, end: 0x30) == true)
        #expect(ServiceChangedRange(start: 1, end: 5).overlaps(start: 6, end: 9) == false)
        #expect(ServiceChangedRange(hex("0B 00 FF").span) == nil)
    }
}
