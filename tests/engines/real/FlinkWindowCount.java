/*
 * A tumbling event-time window count on Apache Flink's own window operator, run on a local
 * MiniCluster, that writes which events Flink dropped as late (the window's late-data side
 * output) and every firing of every window, as JSON. tests/engines/flink_engine.py compiles it
 * against the jars of the apache-flink package and runs it on one capture.
 *
 * Input: one event a line, in arrival order: id,split,event_ms,arrival_ms (ids without commas or
 * spaces).
 *
 * What is real Flink here: BoundedOutOfOrdernessWatermarks (one per split), WatermarksWithIdleness,
 * WatermarkOutputMultiplexer (the per-split min merge and idleness a source reader applies to its
 * splits), the TimestampsAndWatermarksOperator, TumblingEventTimeWindows, EventTimeTrigger,
 * allowedLateness and sideOutputLateData on the WindowOperator.
 *
 * What the test fixes, because Flink takes it from the wall clock: processing time is each
 * event's arrival time, and the periodic watermark emission (pipeline.auto-watermark-interval)
 * happens on whole multiples of --tick-ms since the epoch, in order with the events: every
 * tick before an event's arrival runs before the event (a tick at exactly an arrival after it).
 * With --tick-ms 0 the watermarks are emitted after every event instead (a punctuated emission
 * of the same bounded-out-of-orderness watermark).
 */

import org.apache.flink.api.common.eventtime.BoundedOutOfOrdernessWatermarks;
import org.apache.flink.api.common.eventtime.TimestampAssigner;
import org.apache.flink.api.common.eventtime.TimestampAssignerSupplier;
import org.apache.flink.api.common.eventtime.WatermarkGenerator;
import org.apache.flink.api.common.eventtime.WatermarkGeneratorSupplier;
import org.apache.flink.api.common.eventtime.WatermarkOutput;
import org.apache.flink.api.common.eventtime.WatermarkOutputMultiplexer;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.eventtime.WatermarksWithIdleness;
import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.tuple.Tuple4;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.windowing.ProcessAllWindowFunction;
import org.apache.flink.streaming.api.windowing.assigners.TumblingEventTimeWindows;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.util.Collector;
import org.apache.flink.util.CloseableIterator;
import org.apache.flink.util.OutputTag;
import org.apache.flink.util.clock.RelativeClock;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

public final class FlinkWindowCount {

    /** id, split, event time (ms), arrival time (ms). */
    static final TypeInformation<Tuple4<String, Integer, Long, Long>> EVENT =
            Types.TUPLE(Types.STRING, Types.INT, Types.LONG, Types.LONG);

    /** Processing time, set from the events' arrival times. */
    static final class ArrivalClock implements RelativeClock {
        long nanos;

        @Override
        public long relativeTimeMillis() {
            return nanos / 1_000_000L;
        }

        @Override
        public long relativeTimeNanos() {
            return nanos;
        }
    }

    /**
     * One generator per split behind Flink's multiplexer, as a source reader with per-split
     * watermarks runs them, with the periodic emission driven by the arrival times.
     */
    static final class Splits {
        final long outOfOrdernessMs;
        final long idlenessMs;
        final long tickMs;
        final int splits;
        final ArrivalClock clock = new ArrivalClock();
        final List<WatermarkGenerator<Tuple4<String, Integer, Long, Long>>> generators =
                new ArrayList<>();
        final List<WatermarkOutput> outputs = new ArrayList<>();
        WatermarkOutputMultiplexer multiplexer;
        long nextTick = Long.MIN_VALUE;

        Splits(long outOfOrdernessMs, long idlenessMs, long tickMs, int splits) {
            this.outOfOrdernessMs = outOfOrdernessMs;
            this.idlenessMs = idlenessMs;
            this.tickMs = tickMs;
            this.splits = splits;
        }

        /** Runs the ticks before ``arrivalMs`` (called before the event is forwarded). */
        void before(long arrivalMs) {
            if (tickMs <= 0) {
                return;
            }
            if (nextTick == Long.MIN_VALUE) {
                nextTick = Math.floorDiv(arrivalMs + tickMs - 1, tickMs) * tickMs;
            }
            while (multiplexer != null && nextTick < arrivalMs) {
                tick(nextTick);
                nextTick += tickMs;
            }
        }

        void onEvent(Tuple4<String, Integer, Long, Long> event, long ts, WatermarkOutput output) {
            if (multiplexer == null) {
                multiplexer = new WatermarkOutputMultiplexer(output);
                for (int s = 0; s < splits; s++) {
                    String id = Integer.toString(s);
                    multiplexer.registerNewOutput(id);
                    outputs.add(multiplexer.getDeferredOutput(id));
                    WatermarkGenerator<Tuple4<String, Integer, Long, Long>> generator =
                            new BoundedOutOfOrdernessWatermarks<>(
                                    Duration.ofMillis(outOfOrdernessMs));
                    if (idlenessMs > 0) {
                        generator =
                                new WatermarksWithIdleness<>(
                                        generator, Duration.ofMillis(idlenessMs), clock);
                    }
                    generators.add(generator);
                }
            }
            clock.nanos = event.f3 * 1_000_000L;
            generators.get(event.f1).onEvent(event, ts, outputs.get(event.f1));
            if (tickMs <= 0) {
                tick(event.f3);
            }
        }

        void tick(long atMs) {
            clock.nanos = atMs * 1_000_000L;
            for (int s = 0; s < splits; s++) {
                generators.get(s).onPeriodicEmit(outputs.get(s));
            }
            multiplexer.onPeriodicEmit();
        }
    }

    /** The strategy: the timestamp assigner runs the ticks due, the generator the events. */
    static final class ArrivalClocked implements WatermarkStrategy<Tuple4<String, Integer, Long, Long>> {
        private static final long serialVersionUID = 1L;
        final long outOfOrdernessMs;
        final long idlenessMs;
        final long tickMs;
        final int splits;
        transient Splits state;

        ArrivalClocked(long outOfOrdernessMs, long idlenessMs, long tickMs, int splits) {
            this.outOfOrdernessMs = outOfOrdernessMs;
            this.idlenessMs = idlenessMs;
            this.tickMs = tickMs;
            this.splits = splits;
        }

        Splits state() {
            if (state == null) {
                state = new Splits(outOfOrdernessMs, idlenessMs, tickMs, splits);
            }
            return state;
        }

        @Override
        public TimestampAssigner<Tuple4<String, Integer, Long, Long>> createTimestampAssigner(
                TimestampAssignerSupplier.Context context) {
            Splits splits = state();
            return (event, previous) -> {
                splits.before(event.f3);
                return event.f2;
            };
        }

        @Override
        public WatermarkGenerator<Tuple4<String, Integer, Long, Long>> createWatermarkGenerator(
                WatermarkGeneratorSupplier.Context context) {
            Splits splits = state();
            return new WatermarkGenerator<>() {
                @Override
                public void onEvent(
                        Tuple4<String, Integer, Long, Long> event, long ts, WatermarkOutput out) {
                    splits.onEvent(event, ts, out);
                }

                @Override
                public void onPeriodicEmit(WatermarkOutput out) {}
            };
        }
    }

    static final class Count
            extends ProcessAllWindowFunction<Tuple4<String, Integer, Long, Long>, String, TimeWindow> {
        @Override
        public void process(
                Context context,
                Iterable<Tuple4<String, Integer, Long, Long>> events,
                Collector<String> out) {
            long n = 0;
            for (Tuple4<String, Integer, Long, Long> ignored : events) {
                n++;
            }
            TimeWindow w = context.window();
            out.collect("W," + w.getStart() + "," + w.getEnd() + "," + n);
        }
    }

    static final class Late implements MapFunction<Tuple4<String, Integer, Long, Long>, String> {
        @Override
        public String map(Tuple4<String, Integer, Long, Long> event) {
            return "L," + event.f0;
        }
    }

    private static Map<String, String> flags(String[] args) {
        Map<String, String> flags = new HashMap<>();
        for (int i = 0; i + 1 < args.length; i += 2) {
            flags.put(args[i], args[i + 1]);
        }
        return flags;
    }

    private static String quoted(String text) {
        return "\"" + text.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
    }

    /**
     * Runs every case of --cases FILE (one a line: the flags of one run, separated by spaces)
     * in this one JVM, one job after the other; or the one case the flags describe.
     */
    public static void main(String[] args) throws Exception {
        Map<String, String> flags = flags(args);
        if (flags.containsKey("--cases")) {
            for (String line : Files.readAllLines(Path.of(flags.get("--cases")), StandardCharsets.UTF_8)) {
                if (!line.isBlank()) {
                    run(flags(line.trim().split(" +")));
                }
            }
        } else {
            run(flags);
        }
    }

    private static void run(Map<String, String> flags) throws Exception {
        long windowMs = Long.parseLong(flags.get("--window-ms"));
        long outOfOrdernessMs = Long.parseLong(flags.getOrDefault("--out-of-orderness-ms", "0"));
        long latenessMs = Long.parseLong(flags.getOrDefault("--allowed-lateness-ms", "0"));
        long idlenessMs = Long.parseLong(flags.getOrDefault("--idleness-ms", "0"));
        long tickMs = Long.parseLong(flags.getOrDefault("--tick-ms", "0"));
        int splits = Integer.parseInt(flags.getOrDefault("--splits", "1"));

        List<Tuple4<String, Integer, Long, Long>> events = new ArrayList<>();
        for (String line : Files.readAllLines(Path.of(flags.get("--input")), StandardCharsets.UTF_8)) {
            if (line.isBlank()) {
                continue;
            }
            String[] f = line.split(",");
            events.add(
                    Tuple4.of(f[0], Integer.parseInt(f[1]), Long.parseLong(f[2]), Long.parseLong(f[3])));
        }

        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(1);
        // No wall-clock watermark emission: the strategy emits on the arrival-time ticks.
        env.getConfig().setAutoWatermarkInterval(0);

        OutputTag<Tuple4<String, Integer, Long, Long>> late = new OutputTag<>("late", EVENT);
        SingleOutputStreamOperator<String> counts =
                env.fromData(events, EVENT)
                        .assignTimestampsAndWatermarks(
                                new ArrivalClocked(outOfOrdernessMs, idlenessMs, tickMs, splits))
                        .windowAll(TumblingEventTimeWindows.of(Duration.ofMillis(windowMs)))
                        .allowedLateness(Duration.ofMillis(latenessMs))
                        .sideOutputLateData(late)
                        .process(new Count())
                        .returns(Types.STRING);
        DataStream<String> dropped = counts.getSideOutput(late).map(new Late()).returns(Types.STRING);

        List<String> dropIds = new ArrayList<>();
        List<String> firings = new ArrayList<>();
        try (CloseableIterator<String> it = counts.union(dropped).executeAndCollect("window-count")) {
            while (it.hasNext()) {
                String[] f = it.next().split(",", 2);
                if (f[0].equals("L")) {
                    dropIds.add(quoted(f[1]));
                } else {
                    firings.add("[" + f[1] + "]");
                }
            }
        }
        String json =
                "{\"dropped\": [" + String.join(", ", dropIds) + "], \"firings\": ["
                        + String.join(", ", firings) + "]}\n";
        Files.writeString(Path.of(flags.get("--output")), json, StandardCharsets.UTF_8);
    }
}
