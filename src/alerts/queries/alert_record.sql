-- Records one alert transition (0016): its key makes a repeat collapse.
-- param: rule String 'stuck_loop'
-- param: subject String 'loop-a'
-- param: transition_key String 'ab12'
-- param: notification String 'fired'
-- param: state String 'firing'
-- param: severity String 'critical'
-- param: fired_at_ms UInt64 1764547200000
-- param: resolved_at_ms UInt64 0
-- param: at_ms UInt64 1764547200000
-- param: notifications UInt32 1
-- param: detail String 'finished Stuck'
INSERT INTO alerts (rule, subject, transition_key, notification, state, severity, fired_at_ms, resolved_at_ms, at_ms, notifications, detail, recorded_at)
VALUES ({rule:String}, {subject:String}, {transition_key:String}, {notification:String}, {state:String}, {severity:String},
        {fired_at_ms:UInt64}, {resolved_at_ms:UInt64}, {at_ms:UInt64}, {notifications:UInt32}, {detail:String}, now());
