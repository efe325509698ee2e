// SPDX-License-Identifier: Apache-2.0
import Bounded
import Testing

@Suite("Daily windows")
struct DailyWindowTests {
    @Test("a daily window 22:00-07:00 wraps past midnight; 09:00-17:00 does not; an empty or out-of-range one is refused")
    func dailyWindows() throws {
        let night = try #require(DailyWindow(startMinute: 22 * 60, endMinute: 7 * 60))
        #expect(night.contains(minuteOfDay: 22 * 60))
        #expect(night.contains(minuteOfDay: 23 * 60 + 59))
        #expect(night.contains(minuteOfDay: 0))
        #expect(night.contains(minuteOfDay: 6 * 60 + 59))
        #expect(!night.contains(minuteOfDay: 7 * 60), "the end is not in the window")
        #expect(!night.contains(minuteOfDay: 12 * 60))
        let day = try #require(DailyWindow(startMinute: 9 * 60, endMinute: 17 * 60))
        #expect(day.contains(minuteOfDay: 9 * 60) && !day.contains(minuteOfDay: 17 * 60) && !day.contains(minuteOfDay: 3 * 60))
        #expect(DailyWindow(startMinute: 600, endMinute: 600) == nil)
        #expect(DailyWindow(startMinute: 1_440, endMinute: 10) == nil)
    }
}
