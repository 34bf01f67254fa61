// Package robot drives devgraph's robots: the Backend interface every robot implements,
// a built-in simulator, and the Fleet (a graph.Fleet and a sources-style scanner) that
// names robots by ref, persists them through a graph.RobotStore and notifies subscribers.
//
// # Simulator
//
// Differential-drive (unicycle) kinematics integrated in fixed steps at TickRate (≥ 50 Hz)
// on the fleet's one injected clock (Options.Now, its ticks from Options.Every): one tick
// loop steps every simulated robot of the fleet under one mutex (no goroutine per robot).
// Commanded motion obeys the robot's max_speed, max_turn_rate and max_accel (and an
// angular acceleration of 4 × max_turn_rate per second) on every tick; only safety stops —
// robot_stop, robot_disarm, touching the geofence or an obstacle — halt the robot at once.
// Battery drains with distance, turning and a little while idle, and never rises.
// Obstacles are circles, inflated by RobotRadius; the simulator plans no detours: a goal
// whose straight way crosses an obstacle ends "blocked" (at the start, or as soon as the
// way becomes blocked), never grinding against it. Objects are detected within
// detect_range (distance, and bearing relative to the heading), grasped within
// grasp_reach, carry along with the robot and are released at its position. Other robots
// are not obstacles.
//
// # Commands
//
// Robots start disarmed. Motion (navigate) and the gripper (grasp, release) need arm;
// detect, status and parameters do not. Stop is an emergency stop: the robot halts at
// once, is disarmed and its state is "stopped" until armed again.
//
// # Navigation
//
// Navigate refuses, with an EINVALID error and no motion: non-finite or out-of-range
// coordinates (graph.ValidateCoordinate), a negative, non-finite or too long timeout_s
// (0 means DefaultTimeout, 30 s; at most MaxTimeout), a goal outside the geofence, and a
// robot that is not armed ("arm it first (robot_arm)") — an error rather than a result,
// because arming is the caller's next step. Otherwise it blocks until one of these ends it,
// and returns a result with that status:
//
//   - arrived: within arrival_threshold (default 0.15 m, at most 0.3 m) of the goal;
//   - timeout: the timeout passed in simulation time; the robot brakes to rest (idle,
//     still armed, not e-stopped);
//   - cancelled: the caller's context ended (or the fleet closed); the robot brakes to rest;
//   - blocked: an obstacle lies on the straight way to the goal;
//   - geofence: the next step would leave the geofence; the robot halts at its edge;
//   - low_battery: the battery is below low_battery (at the start or on the way);
//   - disarmed: robot_stop or robot_disarm during the navigation;
//   - preempted: one goal per robot at a time — a new goal for the same robot replaces
//     the running one, whose call returns preempted while the robot drives on to the
//     new goal without stopping.
//
// Different robots navigate at once. progress is called from the caller's goroutine at
// most every ProgressEvery of simulation time with the distance remaining (a slow progress
// function skips updates, never slows the robot).
//
// # Persistence and events
//
// With a Store, each robot's record (ref, serial, name, pose, parameters, battery) is saved when
// it is added for the first time, when it comes to rest (not every tick), and with each
// event: robot.arm, robot.disarm, robot.stop, robot.navigate.start, robot.navigate.end,
// robot.parameters, each carrying graph.ActorFrom of the caller's context (the end of a
// navigation keeps the caller's actor and request id even when the caller has gone).
// Open restores the pose, parameters and battery of configured robots from their records,
// so a persisted pose wins over the start position given to AddSim and a robot starts with
// the battery it was saved with (never full again). Commands that change
// nothing (arming an armed robot) record nothing. Stop and Disarm take effect even when
// the store fails (the failure is logged); Arm and SetParameters are undone and return
// the error.
//
// Each robot is also a device: Scan reports key robot:<serial>, ref robot:<name>, source
// "robot" and the fingerprint robot_serial=<serial> (SIM-<NAME>-0001 for the simulator).
package robot
