/*
 * The pod sandbox's one process (registry.k8s.io/pause of the test images): it holds
 * the pod's namespaces open and does nothing else. As PID 1 of the pod it reaps
 * the children that are reparented to it, and SIGINT or SIGTERM (the kubelet
 * stopping the sandbox) end it with status 0; PID 1 gets no default action for
 * them, so without the handlers it would wait for SIGKILL.
 *
 * Built by `cargo xtask testenv` with `gcc -static`: the image holds nothing else.
 */
#include <signal.h>
#include <stddef.h>
#include <sys/wait.h>
#include <unistd.h>

static void stop(int sig) {
	(void)sig;
	_exit(0);
}

static void reap(int sig) {
	(void)sig;
	while (waitpid(-1, NULL, WNOHANG) > 0) {
	}
}

static int on(int sig, void (*handler)(int), int flags) {
	struct sigaction action = {0};
	action.sa_handler = handler;
	action.sa_flags = flags;
	sigemptyset(&action.sa_mask);
	return sigaction(sig, &action, NULL);
}

int main(void) {
	if (on(SIGINT, stop, 0) || on(SIGTERM, stop, 0) ||
	    on(SIGCHLD, reap, SA_NOCLDSTOP | SA_RESTART)) {
		return 1;
	}
	for (;;) {
		pause();
	}
}
